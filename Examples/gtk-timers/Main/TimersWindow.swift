import CGtk
import Foundation
import RunLoopKit
import Stopwatch
import TaskTimers

/// The application's one window: S3's task list and S1's stopwatch side by side (one
/// window rather than two, so that a screen without a window manager shows both).
@MainActor
final class TimersWindow {
    /// What the window does by itself (the automatic mode of the screenshot test).
    struct Automation {
        /// Tasks added at start, 0.15 s apart.
        var tasks = 0
        /// Whether the stopwatch starts at once.
        var startsStopwatch = false
        /// Seconds after the start at which "Scroll" is clicked (the tracking mode, 2 s each),
        /// and not before the automatic tasks are all added.
        var scrolls: [Double] = []
        /// Seconds after which the window closes by itself.
        var closeAfter: Double?
        /// Whether every refresh tick prints the labels' texts and on-screen regions.
        var printsLabels = false
    }

    /// The GtkWindow.
    let window: Widget
    private let tasks: TaskListPane
    private let stopwatch: StopwatchPane
    private let loop: EVRunLoop
    private let started: EVRunLoop.Instant
    private var timers: [EVTimer] = []
    private var script: ScriptRunner?

    /// Builds the window on `loop` (EVRunLoop.main) and presents it. Closing it (or
    /// `automation.closeAfter`) quits the task list, which stops the loop's run: the
    /// outermost one, also when it happens during a scroll's nested run.
    init(loop: EVRunLoop, refreshMode: RefreshMode, automation: Automation) {
        self.loop = loop
        started = loop.now
        Self.loadStyle()
        window = gtk_window_new()
        gtk_window_set_title(window.as(GtkWindow.self), "RunLoopKit timers (GTK 4)")
        gtk_window_set_default_size(window.as(GtkWindow.self), 760, 440)
        // GTK owns a toplevel and destroys it when it closes; this reference keeps its memory
        // until finish(), for a refresh tick that comes after the close in the same pass.
        g_object_ref(window.raw)

        tasks = TaskListPane(loop: loop, refreshMode: refreshMode)
        stopwatch = StopwatchPane(loop: loop, startsAtOnce: automation.startsStopwatch)
        let panes = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0)!
        gtk_widget_set_hexpand(tasks.root, 1)
        gtk_widget_set_size_request(stopwatch.root, 300, -1)
        for pane in [tasks.root, stopwatch.root] { gtk_widget_add_css_class(pane, "pane") }
        gtk_box_append(panes.as(GtkBox.self), tasks.root)
        gtk_box_append(panes.as(GtkBox.self), gtk_separator_new(GTK_ORIENTATION_VERTICAL))
        gtk_box_append(panes.as(GtkBox.self), stopwatch.root)
        gtk_window_set_child(window.as(GtkWindow.self), panes)

        Signal.connect(window.raw, "close-request", returning: { [weak self] in
            self?.tasks.perform(.quit)
            return false
        })
        automate(automation)
        gtk_window_present(window.as(GtkWindow.self))
    }

    /// What the task list and the stopwatch measured.
    typealias Reports = (tasks: SessionReport?, stopwatch: StopwatchSummary)

    /// Stops every timer of the window; returns the task list's and the stopwatch's reports.
    func finish() -> Reports {
        script?.cancel()
        for timer in timers { timer.invalidate() }
        timers.removeAll()
        let reports = (tasks.finish(), stopwatch.finish())
        g_object_unref(window.raw)
        return reports
    }

    private func automate(_ automation: Automation) {
        // The scrolls click the button from a GLib timeout, as a person's click arrives: in
        // GLib's dispatch, which the nested run of the tracking mode then runs inside. They
        // wait for the automatic tasks: the script's waits are in the default mode, so a
        // scroll that began first would hold back the rows that make the list scrollable.
        let scrollButton = tasks.scrollButton
        let start = g_get_monotonic_time()
        let clickScrolls = {
            let elapsed = Double(g_get_monotonic_time() - start) / 1e6
            for at in automation.scrolls {
                GLibTimeout.once(after: max(0, at - elapsed)) { gtk_widget_activate(scrollButton) }
            }
        }
        if automation.tasks > 0 {
            let actions = Array(repeating: [TaskAction.add, .wait(0.15)], count: automation.tasks).flatMap { $0 }
            let script = ScriptRunner(actions: actions.dropLast(), loop: loop,
                                      perform: { [weak self] action in MainActor.assumeIsolated { self?.tasks.perform(action) } },
                                      finished: { MainActor.assumeIsolated { clickScrolls() } })
            self.script = script
            script.start()
        } else {
            clickScrolls()
        }
        if let closeAfter = automation.closeAfter {
            // In the common modes, so that a scroll (the tracking mode) does not hold it back.
            after(closeAfter, mode: .common) { window in
                gtk_window_close(window.window.as(GtkWindow.self))
            }
        }
        if automation.printsLabels { tasks.onTick = { [weak self] in self?.printLabels() } }
    }

    /// Runs `action` once, `seconds` after the start, in `mode`.
    private func after(_ seconds: Double, mode: EVRunLoop.Mode = .default, _ action: @escaping @MainActor (TimersWindow) -> Void) {
        let timer = EVTimer(interval: seconds, repeats: false, block: EVRunLoop.isolated { [weak self] _ in
            MainActor.assumeIsolated { self.map(action) }
        })
        timers.append(timer)
        loop.add(timer, forMode: mode)
    }

    /// One line of JSON: the labels' texts as GTK holds them, the loop's mode, how far the
    /// list is scrolled, and the on-screen regions (root window pixels) of the stopwatch label and the task list.
    private func printLabels() {
        struct Line: Encodable {
            var seconds: Double
            var mode: String
            var ticks: Int
            var stopwatch: String
            var ages: [String]
            var scrollOffset: Int
            var regions: [String: [Int]]
        }
        let line = Line(
            seconds: ((loop.now - started) / .milliseconds(1)).rounded() / 1000,
            mode: loop.currentMode.map { $0 == .default ? "default" : $0.rawValue } ?? "-",
            ticks: tasks.state?.ticks ?? 0, stopwatch: stopwatch.text, ages: tasks.ageTexts,
            scrollOffset: Int(tasks.scrollOffset.rounded()),
            regions: ["stopwatch": bounds(of: stopwatch.display), "list": bounds(of: tasks.scroller),
                      "window": bounds(of: window)])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        if let json = try? encoder.encode(line) {
            FileHandle.standardOutput.write(Data("labels ".utf8) + json + Data("\n".utf8))
        }
    }

    /// `widget`'s bounds in the window's surface, which is the root window's origin when
    /// no window manager places it (Xvfb): x, y, width, height.
    private func bounds(of widget: Widget) -> [Int] {
        var rect = graphene_rect_t()
        guard gtk_widget_compute_bounds(widget, window, &rect) != 0 else { return [] }
        var x = 0.0, y = 0.0
        gtk_native_get_surface_transform(window.opaque, &x, &y)
        return [Int((Double(rect.origin.x) + x).rounded()), Int((Double(rect.origin.y) + y).rounded()),
                Int(Double(rect.size.width).rounded()), Int(Double(rect.size.height).rounded())]
    }

    private static func loadStyle() {
        let provider = gtk_css_provider_new()
        gtk_css_provider_load_from_data(provider, """
            .pane { padding: 14px; }
            .pane-title { font-weight: bold; font-size: 15pt; }
            .task-list { border: 1px solid alpha(currentColor, 0.25); }
            .task-row { padding: 6px 10px; }
            .selected-task { background-color: alpha(#3584e4, 0.18); }
            .age { font-family: monospace; font-feature-settings: "tnum"; }
            .done { text-decoration: line-through; opacity: 0.6; }
            .status-line { font-size: 9pt; opacity: 0.75; }
            .stopwatch { font-family: monospace; font-size: 34pt; font-weight: bold; }
            """, -1)
        gtk_style_context_add_provider_for_display(gdk_display_get_default(), OpaquePointer(provider),
                                                   UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
    }
}
