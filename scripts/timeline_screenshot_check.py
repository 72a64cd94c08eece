"""Checks a screenshot of a trace timeline as a person would look at it, with the standard
library only: the PNG is not blank, and it shows the expected number of callout bars.

Usage: python3 scripts/timeline_screenshot_check.py SCREENSHOT.png EXPECTED_BARS

A bar is a connected patch of the callout colour (TraceTimeline's #1f77b4) at least 3 px
wide and 8 px tall; the legend's sample of the colour is one more patch than the callouts.
"""
import struct
import sys
import zlib

CALLOUT = (0x1F, 0x77, 0xB4)


def read_png(path):
    """(width, height, rows): rows[y] is a list of (r, g, b); 8-bit RGB or RGBA, not interlaced."""
    with open(path, "rb") as source:
        data = source.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    offset, idat, header = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise ValueError(f"{path}: bit depth {depth}, colour type {colour}, interlace {interlace} not read here")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + predictor) & 0xFF
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def patches(width, height, rows, colour, tolerance=40):
    """The bounding boxes (x0, y0, x1, y1) of the connected patches of `colour`."""
    def near(pixel):
        return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))
    seen = [[False] * width for _ in range(height)]
    boxes = []
    for y in range(height):
        for x in range(width):
            if seen[y][x] or not near(rows[y][x]):
                continue
            stack, box = [(x, y)], [x, y, x, y]
            seen[y][x] = True
            while stack:
                px, py = stack.pop()
                box = [min(box[0], px), min(box[1], py), max(box[2], px), max(box[3], py)]
                for nx, ny in ((px + 1, py), (px - 1, py), (px, py + 1), (px, py - 1)):
                    if 0 <= nx < width and 0 <= ny < height and not seen[ny][nx] and near(rows[ny][nx]):
                        seen[ny][nx] = True
                        stack.append((nx, ny))
            boxes.append(tuple(box))
    return boxes


def main():
    path, expected = sys.argv[1], int(sys.argv[2])
    width, height, rows = read_png(path)
    failures = []
    pixels = [pixel for row in rows for pixel in row]
    ink = sum(1 for pixel in pixels if min(pixel) < 200)
    colours = len(set(pixels))
    print(f"{path}: {width}x{height}, {ink} dark pixels ({100 * ink / len(pixels):.1f}%), {colours} colours")
    if ink < len(pixels) // 100 or colours < 8:
        failures.append("the screenshot is blank (under 1% dark pixels, or fewer than 8 colours)")
    bars = [box for box in patches(width, height, rows, CALLOUT)
            if box[2] - box[0] + 1 >= 3 and box[3] - box[1] + 1 >= 8]
    print(f"callout-coloured patches: {len(bars)} (expected {expected} bars + the legend's sample)")
    if len(bars) != expected + 1:
        failures.append(f"{len(bars)} callout-coloured patches seen, {expected + 1} expected")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{2 - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
