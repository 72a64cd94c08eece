"""Starts the GTK 4 example under Xvfb, takes screenshots a few seconds apart, and checks
that the window is drawn and that its elapsed labels advanced, on screen and as GTK holds
them; once on each direction of the GLib bridge (--main-loop host, then attach). Run by
scripts/gtk-screenshot-test (which installs what this needs); prints one line per check and
"N passed, M failed", and exits 1 when a check failed.

The app runs in its automatic mode: it adds 12 tasks, starts the stopwatch, scrolls the
list (the loop's tracking mode, 2 s) and prints, on every refresh tick, the labels' texts
and the on-screen regions of the stopwatch label and the task list (`--print-labels`).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xwd  # noqa: E402

SCROLL_AT = 2.5       # the scroll runs the tracking mode from 2.5 s (or once the 12 tasks are in) for 2 s
RUN_SECONDS = 8
FIRST_SHOT_TICK = 2   # shots 0.3 s after the refresh ticks at about 2 s and 6 s
SECOND_SHOT_TICK = 6


class App:
    """The app's process; its `labels` lines as they arrive, the rest of its output kept."""

    def __init__(self, command, env):
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.labels, self.other, self.errors = [], [], []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, args=(self.process.stdout, True), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, False), daemon=True).start()

    def _read(self, stream, is_stdout):
        for line in stream:
            with self.changed:
                if is_stdout and line.startswith("labels "):
                    self.labels.append(json.loads(line[len("labels "):]))
                else:
                    (self.other if is_stdout else self.errors).append(line.rstrip("\n"))
                self.changed.notify_all()

    def wait_for_tick(self, ticks, timeout):
        """The first labels line with at least `ticks` refresh ticks, or None after `timeout` s."""
        return self.wait_for(lambda line: line["ticks"] >= ticks, timeout)

    def wait_for_scrolled(self, timeout):
        """The first labels line printed in the tracking mode with the list scrolled (a tick
        in the scroll's first 0.1 s sees it still at the top), or None after `timeout` s."""
        return self.wait_for(lambda line: line["mode"] == "tracking" and line["scrollOffset"] > 0, timeout)

    def wait_for(self, wanted, timeout):
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                line = next((line for line in self.labels if wanted(line)), None)
                left = deadline - time.monotonic()
                if line or left <= 0 or self.process.poll() is not None:
                    return line
                self.changed.wait(min(left, 0.1))


def start_xvfb():
    """An Xvfb server on a free display number, and that number."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x600x24", "-nolisten", "tcp"],
                              pass_fds=[write_end], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as display:
        number = display.readline().strip()
    if not number:
        server.kill()
        raise RuntimeError("Xvfb did not start")
    return server, number


def shoot(display, path):
    """Dumps the screen to `path` at once; the dump is read after the run, since reading one
    (pure Python) takes a second or more, long enough to make the next shot miss its moment."""
    subprocess.run(["xwd", "-root", "-silent", "-out", path], env={**os.environ, "DISPLAY": f":{display}"}, check=True)
    return path


def colours(image):
    counts = {}
    for row in image.rows:
        for i in range(0, len(row), 3):
            key = row[i:i + 3]
            counts[key] = counts.get(key, 0) + 1
    return counts


def changed_pixels(first, second, region):
    x, y, width, height = region
    a, b = first.crop(x, y, width, height), second.crop(x, y, width, height)
    return sum(1 for row_a, row_b in zip(a.rows, b.rows) for i in range(0, len(row_a), 3) if row_a[i:i + 3] != row_b[i:i + 3])


def stopwatch_seconds(text):
    match = re.fullmatch(r"(\d\d):(\d\d)[.,](\d\d)", text)
    return None if match is None else int(match[1]) * 60 + int(match[2]) + int(match[3]) / 100


def age(text):
    match = re.fullmatch(r"created (\d+) s ago", text)
    return None if match is None else int(match[1])


def check_run(binary, main_loop, app_arguments, save, check):
    """One run of the app with `--main-loop main_loop`; `check(ok, what)` records each check."""
    server, display = start_xvfb()
    work = tempfile.mkdtemp(prefix="gtk-screenshots-")
    env = {**os.environ, "DISPLAY": f":{display}", "GDK_BACKEND": "x11", "GTK_A11Y": "none", "NO_AT_BRIDGE": "1"}
    env.pop("WAYLAND_DISPLAY", None)
    try:
        app = App([binary, "--main-loop", main_loop, "--auto-add", "12", "--scroll-at", str(SCROLL_AT),
                   "--run-seconds", str(RUN_SECONDS), "--print-labels"] + app_arguments, env)
        first_line = app.wait_for_tick(FIRST_SHOT_TICK, timeout=30)
        time.sleep(0.3)
        first = shoot(display, os.path.join(work, "first.xwd"))
        scrolling_line = app.wait_for_scrolled(timeout=30)
        time.sleep(0.3)
        scrolling = shoot(display, os.path.join(work, "scrolling.xwd"))
        second_line = app.wait_for_tick(SECOND_SHOT_TICK, timeout=30)
        time.sleep(0.3)
        second = shoot(display, os.path.join(work, "second.xwd"))
        try:
            status = app.process.wait(timeout=RUN_SECONDS + 30)
        except subprocess.TimeoutExpired:
            app.process.kill()
            status = "killed: still running"
    finally:
        server.terminate()
        server.wait()

    first, scrolling, second = (xwd.read_xwd(path) for path in (first, scrolling, second))
    shutil.rmtree(work)
    check(status == 0, f"the app ran {RUN_SECONDS} s and exited by itself (status {status})")
    if status != 0:
        print("\n".join(app.errors[-20:]), file=sys.stderr)
    check(first_line is not None and second_line is not None,
          f"the app printed its labels at refresh ticks {FIRST_SHOT_TICK} and {SECOND_SHOT_TICK} "
          f"({len(app.labels)} labels lines in all)")
    if first_line is None or second_line is None:
        return

    # The window is drawn in every screenshot: many colours (text is antialiased), much of it
    # not the background. The last one is the picture `--save` writes.
    for name, shot in (("first", first), ("scrolling", scrolling), ("last", second)):
        window = shot.crop(*second_line["regions"]["window"])
        counts = colours(window)
        background = max(counts.values())
        drawn = 1 - background / (window.width * window.height)
        check(window.width >= 400 and window.height >= 300 and len(counts) >= 64 and drawn >= 0.05,
              f"the window is drawn in the {name} screenshot: {window.width}x{window.height} pixels, "
              f"{len(counts)} distinct colours, {drawn:.0%} of it not the background colour")
    if save:
        os.makedirs(os.path.dirname(os.path.abspath(save)), exist_ok=True)
        second.crop(*second_line["regions"]["window"]).write_png(save)

    # The labels advanced on screen: the screenshots differ in the stopwatch's and the list's regions.
    for name in ("stopwatch", "list"):
        region = second_line["regions"][name]
        changed = changed_pixels(first, second, region)
        check(changed >= 50, f"{changed} pixels of the {name} region ({region}) changed between the screenshots")

    # The scroll: the list moved in the tracking mode. Hosted (GLib in the common modes), GTK
    # draws inside the scroll's nested run, so the list moved on screen too; attached (GLib's
    # loop drives RunLoopKit), GLib does not run inside RunLoopKit's nested run, so the window
    # is redrawn only when the scroll ends: reported, not checked.
    check(scrolling_line is not None,
          "the list was scrolled in the tracking mode: "
          + (f"{scrolling_line['scrollOffset']} px at {scrolling_line['seconds']} s" if scrolling_line
             else "no tick printed there with the list scrolled"))
    if scrolling_line is not None:
        changed = changed_pixels(first, scrolling, scrolling_line["regions"]["list"])
        what = f"{changed} pixels of the list region changed on screen during the scroll"
        if main_loop == "host":
            check(changed >= 1000, what)
        else:
            print(f"INFO {what} (attached: the window is not redrawn during RunLoopKit's nested run)")

    # ... and in GTK's labels: ages from dates, the stopwatch from its start instant.
    shown = (stopwatch_seconds(first_line["stopwatch"]), stopwatch_seconds(second_line["stopwatch"]))
    check(None not in shown and shown[1] - shown[0] >= 2,
          f"the stopwatch label went from {first_line['stopwatch']} to {second_line['stopwatch']}")
    ages = [[age(text) for text in line["ages"]] for line in app.labels]
    first_row = [row[0] for row in ages if row]
    check(all(None not in row for row in ages) and len(first_row) >= 6
          and all(later - earlier in (1, 2) for earlier, later in zip(first_row, first_row[1:])),
          f"the first row's age advanced on every refresh tick: {first_row}")
    tracking = [index for index, line in enumerate(app.labels) if line["mode"] == "tracking" and index > 0]
    advanced = [index for index in tracking if ages[index][0] > ages[index - 1][0]]
    check(len(advanced) >= 1,
          f"the ages kept advancing while the list scrolled: {len(advanced)} of {len(tracking)} ticks in the tracking mode")
    missed = [int(match[1]) for line in app.other for match in [re.search(r"missed (\d+);", line)] if match]
    check(missed == [0], f"no refresh tick was missed while tracking (the app's summary: {missed})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="the built gtk-timers executable")
    parser.add_argument("--main-loop", action="append", choices=["host", "attach"],
                        help="the app's --main-loop; repeatable, each a run of its own (default: host, then attach)")
    parser.add_argument("--save", help="also write the host run's last screenshot (the window) as this PNG file")
    parser.add_argument("--app-argument", action="append", default=[],
                        help="one more argument for the app, such as --refresh-mode=default (the test must fail then)")
    arguments = parser.parse_args()

    results = []
    for main_loop in arguments.main_loop or ["host", "attach"]:
        def check(ok, what):
            results.append(ok)
            print(("PASS " if ok else "FAIL ") + f"[{main_loop}] " + what, flush=True)
        check_run(arguments.binary, main_loop, arguments.app_argument,
                  arguments.save if main_loop == "host" else None, check)

    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
