import Foundation
import RunLoopKit
import RunLoopKitSVGPlot

/// The layout of a timeline and its SVG: every step placed on one long strip, cut into rows.
struct TimelineDrawing {
    typealias Entry = EVRunLoop.Trace.Entry

    /// How the time after a step is drawn.
    enum Interval {
        /// Awake: to scale, at least ``minAdvance``.
        case awake(Int64)
        /// Asleep, from a `sleep` step to the next: a gap.
        case sleep
        /// Between two runs for a while (at least ``outsideGapFloor``): a gap.
        case outside(Int64)
    }

    // Geometry, in pixels.
    static let minAdvance = 20.0
    static let minBar = 4.0
    static let gapWidth = 150.0
    static let maxRowWidth = 1100.0
    static let left = 112.0
    static let right = 110.0
    static let header = 78.0
    static let groupHeight = 196.0
    static let axisHeight = 44.0
    static let rowSpacing = 18.0
    // Inside a lane group: the band, the ticks' labels, the ticks, the bars, the bars' labels.
    static let bandTop = 0.0, bandHeight = 16.0
    static let tickTop = 84.0, tickBottom = 102.0
    static let barTop = 110.0, barHeight = 14.0
    static let outsideGapFloor: Int64 = 1_000_000
    /// At most 20 px per microsecond: a trace with almost no awake time is not blown up.
    static let maxScale = 0.02

    static let calloutColour = "#1f77b4"
    static let wakeColour = "#ff7f0e"
    static let bandColours = ["#dbe8f6", "#fde3c8", "#d8f0d8", "#eadcf2", "#f6dada"]

    let entries: [Entry]
    let origin: Int64
    /// Pixels per nanosecond of awake time.
    let scale: Double
    /// Each step's place on the strip.
    let place: [Double]
    /// A wait, or a while between runs, drawn as a box of fixed width.
    struct Gap {
        /// The step before it (a `sleep`, or a `return`).
        let after: Int
        let start: Double
        let end: Double
        let depth: Int
        let lines: [String]
        let sleep: Bool
    }

    /// The gaps, in order.
    let gaps: [Gap]
    let rowWidth: Double
    let groups: Int

    init(entries: [Entry]) {
        self.entries = entries
        origin = entries.first?.instant.nanoseconds ?? 0
        groups = max(1, entries.map(\.depth).max() ?? 1)
        var intervals: [Interval] = []
        for (index, entry) in entries.enumerated().dropLast() {
            let elapsed = max(0, entries[index + 1].instant.nanoseconds - entry.instant.nanoseconds)
            if case .sleep = entry.step {
                intervals.append(.sleep)
            } else if case .event(.returned) = entry.step, entry.depth <= 1, elapsed >= Self.outsideGapFloor {
                intervals.append(.outside(elapsed))
            } else {
                intervals.append(.awake(elapsed))
            }
        }
        let awake = intervals.reduce(Int64(0)) { sum, interval in
            if case .awake(let elapsed) = interval { sum + elapsed } else { sum }
        }
        let target = max(300, 12 * Double(entries.count))
        let scale = awake > 0 ? min(target / Double(awake), Self.maxScale) : Self.maxScale

        // The strip without rows, to size a short trace's single row.
        func advance(_ interval: Interval) -> Double {
            switch interval {
            case .awake(let elapsed): max(Self.minAdvance, Double(elapsed) * scale)
            case .sleep, .outside: Self.gapWidth
            }
        }
        let length = intervals.reduce(0.0) { $0 + advance($1) }
        let rowWidth = length + 12 <= Self.maxRowWidth ? max(400, length + 12) : Self.maxRowWidth

        var positions = [0.0]
        var found: [Gap] = []
        for (index, interval) in intervals.enumerated() {
            var at = positions[index]
            switch interval {
            case .awake:
                at += advance(interval)
                // A callout's own bar is never cut by a row's end either.
                let next = entries[index + 1]
                if Self.callout(next.step) != nil {
                    let bar = max(Self.minBar, Double(next.duration.map(Self.nanoseconds) ?? 0) * scale)
                    if (at / rowWidth).rounded(.down) != ((at + bar + 3) / rowWidth).rounded(.down), bar + 3 < rowWidth {
                        at = ((at / rowWidth).rounded(.down) + 1) * rowWidth
                    }
                }
            case .sleep, .outside:
                // A gap is never cut by a row's end: it starts the next row instead.
                if (at / rowWidth).rounded(.down) != ((at + Self.gapWidth - 0.001) / rowWidth).rounded(.down) {
                    at = ((at / rowWidth).rounded(.down) + 1) * rowWidth
                }
                let entry = entries[index]
                let next = entries[index + 1]
                let sleep = if case .sleep = interval { true } else { false }
                found.append(Gap(after: index, start: at, end: at + Self.gapWidth, depth: max(1, entry.depth),
                                lines: Self.gapLines(interval, entry, next, origin: origin), sleep: sleep))
                at += Self.gapWidth
            }
            positions.append(at)
        }
        self.scale = scale
        self.rowWidth = rowWidth
        self.place = positions
        self.gaps = found
    }

    /// What a gap says: how long, the deadline asked for, why the wait ended.
    static func gapLines(_ interval: Interval, _ entry: Entry, _ next: Entry, origin: Int64) -> [String] {
        let elapsed = next.instant.nanoseconds - entry.instant.nanoseconds
        switch interval {
        case .sleep:
            guard case .sleep(let deadline) = entry.step else { return [] }
            var lines = ["slept \(milliseconds(elapsed)) ms"]
            lines.append(deadline.map { "deadline \(milliseconds($0.nanoseconds - origin))" } ?? "no deadline")
            if case .wake(let reason) = next.step { lines.append("woke: \(reason)") }
            return lines
        case .outside(let elapsed):
            return ["\(milliseconds(elapsed)) ms", "outside a run"]
        case .awake:
            return []
        }
    }

    /// Nanoseconds as milliseconds with three decimals.
    static func milliseconds(_ nanoseconds: Int64) -> String {
        String(format: "%.3f", Double(nanoseconds) / 1e6)
    }

    /// A duration in whole nanoseconds.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Whether `step` is a callout, and its label.
    static func callout(_ step: Entry.Step) -> String? {
        guard case .event(let event) = step else { return nil }
        switch event {
        case .observer, .timer, .source, .block, .job, .mainQueue: return event.description
        case .activity, .returned: return nil
        }
    }

    // MARK: Rows

    var rowCount: Int { Int(((place.last ?? 0) / rowWidth).rounded(.down)) + 1 }
    var rowHeight: Double { Double(groups) * Self.groupHeight + Self.axisHeight + Self.rowSpacing }

    /// The row a strip position falls in, and its x in the picture.
    func point(_ position: Double) -> (row: Int, x: Double) {
        let row = Int((position / rowWidth).rounded(.down))
        return (row, Self.left + position - Double(row) * rowWidth)
    }

    /// The pieces of a strip span, one per row it crosses: row, x, width.
    func pieces(_ start: Double, _ end: Double) -> [(row: Int, x: Double, width: Double)] {
        var result: [(row: Int, x: Double, width: Double)] = []
        var from = start
        while from < end {
            let row = Int((from / rowWidth).rounded(.down))
            let to = min(end, Double(row + 1) * rowWidth)
            result.append((row, Self.left + from - Double(row) * rowWidth, to - from))
            from = to
        }
        return result
    }

    /// The top of lane group `depth` (1-based) in `row`.
    func groupTop(_ row: Int, _ depth: Int) -> Double {
        Self.header + Double(row) * rowHeight + Double(max(1, depth) - 1) * Self.groupHeight
    }

    // MARK: SVG

    func svg(title: String) -> String {
        let width = Self.left + rowWidth + Self.right
        let height = Self.header + Double(rowCount) * rowHeight
        var lines = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" "##
                + ##"viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif" font-size="11">"##,
            ##"<rect width="100%" height="100%" fill="white"/>"##,
            ##"<text x="\##(Self.f(width / 2))" y="22" text-anchor="middle" font-size="16">\##(Figure.escaped(title))</text>"##,
        ]
        lines += legend()
        guard !entries.isEmpty else {
            lines.append(##"<text x="\##(Self.f(Self.left))" y="\##(Self.f(Self.header + 20))">no steps recorded</text>"##)
            return (lines + ["</svg>"]).joined(separator: "\n") + "\n"
        }
        for row in 0..<rowCount { lines += laneNames(row) }
        lines += bands()
        for gap in gaps { lines += drawGap(gap) }
        lines += steps()
        lines += axis()
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    private func legend() -> [String] {
        let y = 48.0
        let perPixel = 1 / scale / 1_000  // microseconds per pixel
        return [
            ##"<rect x="\##(Self.f(Self.left))" y="\##(Self.f(y - 10))" width="18" height="10" fill="\##(Self.calloutColour)"/>"##,
            ##"<text x="\##(Self.f(Self.left + 24))" y="\##(Self.f(y))">callout, as long as it ran</text>"##,
            ##"<line x1="\##(Self.f(Self.left + 200))" y1="\##(Self.f(y - 12))" x2="\##(Self.f(Self.left + 200))" y2="\##(Self.f(y + 1))" stroke="#333" stroke-width="2"/>"##,
            ##"<text x="\##(Self.f(Self.left + 208))" y="\##(Self.f(y))">activity of the pass</text>"##,
            ##"<path d="M\##(Self.f(Self.left + 340)),\##(Self.f(y - 11)) h12 l-6,10 z" fill="\##(Self.wakeColour)"/>"##,
            ##"<text x="\##(Self.f(Self.left + 358))" y="\##(Self.f(y))">wake</text>"##,
            ##"<rect x="\##(Self.f(Self.left + 410))" y="\##(Self.f(y - 10))" width="18" height="10" fill="#eeeeee" stroke="#999" stroke-dasharray="3,2"/>"##,
            ##"<text x="\##(Self.f(Self.left + 434))" y="\##(Self.f(y))">sleep (a gap, not to scale)</text>"##,
            ##"<text x="\##(Self.f(Self.left))" y="\##(Self.f(y + 18))" fill="#555">"##
                + "Awake time to scale: 1 px = \(String(format: "%.3g", perPixel)) µs; each step at least "
                + "\(Int(Self.minAdvance)) px after the one before. Times in ms since the first step.</text>",
        ]
    }

    private func laneNames(_ row: Int) -> [String] {
        var lines: [String] = []
        for depth in 1...groups {
            let top = groupTop(row, depth)
            let name = depth == 1 ? "run" : "nested run \(depth)"
            lines.append(##"<text x="8" y="\##(Self.f(top + 12))" font-weight="bold">\##(name)</text>"##)
            lines.append(##"<text x="8" y="\##(Self.f(top + Self.tickBottom - 4))">pass</text>"##)
            lines.append(##"<text x="8" y="\##(Self.f(top + Self.barTop + 11))">callouts</text>"##)
            lines.append(##"<line x1="\##(Self.f(Self.left - 6))" y1="\##(Self.f(top + Self.tickBottom))" x2="\##(Self.f(Self.left + rowWidth))" y2="\##(Self.f(top + Self.tickBottom))" stroke="#ccc"/>"##)
        }
        let axisY = groupTop(row, groups + 1) + 8
        lines.append(##"<text x="8" y="\##(Self.f(axisY + 14))">time (ms)</text>"##)
        return lines
    }

    /// One band per run and depth: where the run was going on, and its mode.
    private func bands() -> [String] {
        var open: [Int: (mode: String, start: Double, end: Double)] = [:]
        var closed: [(depth: Int, mode: String, start: Double, end: Double)] = []
        for (index, entry) in entries.enumerated() where entry.depth >= 1 {
            let at = place[index]
            for depth in open.keys.sorted() where depth > entry.depth {
                closed.append((depth, open[depth]!.mode, open[depth]!.start, open[depth]!.end))
                open[depth] = nil
            }
            for depth in 1..<entry.depth { open[depth]?.end = at }
            let mode = entry.mode?.rawValue ?? "(entered before the trace)"
            let starts: Bool = if case .event(.activity(let activity)) = entry.step { activity == .entry } else { false }
            if let band = open[entry.depth], band.mode == mode, !starts {
                open[entry.depth]?.end = at
            } else {
                if let band = open[entry.depth] { closed.append((entry.depth, band.mode, band.start, band.end)) }
                open[entry.depth] = (mode, at, at)
            }
        }
        for (depth, band) in open { closed.append((depth, band.mode, band.start, band.end)) }
        var colours: [String: String] = [:]
        var lines: [String] = []
        for band in closed.sorted(by: { ($0.start, $0.depth) < ($1.start, $1.depth) }) {
            if colours[band.mode] == nil { colours[band.mode] = Self.bandColours[colours.count % Self.bandColours.count] }
            let label = "mode \(band.mode)"
            // A little wider than its steps, within the rows they are on.
            let from = max(band.start - 6, (band.start / rowWidth).rounded(.down) * rowWidth)
            let to = min(band.end + 10, ((band.end / rowWidth).rounded(.down) + 1) * rowWidth)
            for piece in pieces(from, to) {
                let top = groupTop(piece.row, band.depth) + Self.bandTop
                lines.append(##"<rect class="run" x="\##(Self.f(piece.x))" y="\##(Self.f(top))" width="\##(Self.f(piece.width))" height="\##(Self.f(Self.bandHeight))" fill="\##(colours[band.mode]!)"/>"##)
                lines.append(##"<text x="\##(Self.f(piece.x + 4))" y="\##(Self.f(top + 12))">\##(Figure.escaped(label))</text>"##)
            }
        }
        return lines
    }

    private func drawGap(_ gap: Gap) -> [String] {
        let (row, x) = point(gap.start)
        let top = groupTop(row, gap.depth) + Self.bandHeight + 4
        let bottom = groupTop(row, gap.depth) + Self.barTop + Self.barHeight
        let kind = gap.sleep ? "sleep" : "outside"
        var lines = [
            ##"<rect class="\##(kind)" x="\##(Self.f(x + 2))" y="\##(Self.f(top))" width="\##(Self.f(gap.end - gap.start - 4))" height="\##(Self.f(bottom - top))" fill="#eeeeee" stroke="#999" stroke-dasharray="3,2"/>"##,
        ]
        for (index, text) in gap.lines.enumerated() {
            lines.append(##"<text x="\##(Self.f(x + (gap.end - gap.start) / 2))" y="\##(Self.f(top + 24 + 15 * Double(index)))" text-anchor="middle">\##(Figure.escaped(text))</text>"##)
        }
        return lines
    }

    /// The ticks, the wakes and the callout bars.
    private func steps() -> [String] {
        var lines: [String] = []
        for (index, entry) in entries.enumerated() {
            let (row, x) = point(place[index])
            let top = groupTop(row, entry.depth)
            let at = Self.milliseconds(entry.instant.nanoseconds - origin)
            switch entry.step {
            case .sleep:
                continue
            case .wake(let reason):
                let y = top + Self.tickTop
                lines.append(##"<path class="wake" d="M\##(Self.f(x - 6)),\##(Self.f(y)) h12 l-6,10 z" fill="\##(Self.wakeColour)"><title>wake (\##(reason)) at \##(at) ms</title></path>"##)
            case .event(let event):
                if let label = Self.callout(entry.step) {
                    lines += bar(index, entry, label: label, at: at)
                    continue
                }
                let dashed = if case .returned = event { ##" stroke-dasharray="3,2""## } else { "" }
                lines.append(##"<line class="activity" x1="\##(Self.f(x))" y1="\##(Self.f(top + Self.tickTop))" x2="\##(Self.f(x))" y2="\##(Self.f(top + Self.tickBottom))" stroke="#333" stroke-width="2"\##(dashed)><title>\##(Figure.escaped(event.description)) at \##(at) ms</title></line>"##)
                lines.append(##"<text transform="translate(\##(Self.f(x + 2)),\##(Self.f(top + Self.tickTop - 3))) rotate(-45)">\##(Figure.escaped(event.description))</text>"##)
            }
        }
        return lines
    }

    /// A callout's bar: as long as it ran, at least ``minBar``; one that ran a nested run spans
    /// it, up to the next step of its own run.
    private func bar(_ index: Int, _ entry: Entry, label: String, at: String) -> [String] {
        let start = place[index]
        let next = entries.indices.dropFirst(index + 1).first { entries[$0].depth <= entry.depth }
        let ran = Double(entry.duration.map(Self.nanoseconds) ?? 0) * scale
        var end: Double
        if let next {
            end = next > index + 1 ? place[next] - 3 : min(start + max(Self.minBar, ran), place[next] - 3)
        } else {
            end = max(start + max(Self.minBar, ran), index + 1 < entries.count ? place[entries.count - 1] + 8 : 0)
        }
        end = max(end, start + Self.minBar)
        let took = entry.duration.map { "\(Self.milliseconds(Self.nanoseconds($0))) ms" } ?? "still running"
        var lines: [String] = []
        for (number, piece) in pieces(start, end).enumerated() {
            let top = groupTop(piece.row, entry.depth) + Self.barTop
            lines.append(##"<rect class="callout" x="\##(Self.f(piece.x))" y="\##(Self.f(top))" width="\##(Self.f(piece.width))" height="\##(Self.f(Self.barHeight))" fill="\##(Self.calloutColour)"><title>\##(Figure.escaped(label)) at \##(at) ms, \##(took)</title></rect>"##)
            // Each piece labelled: a bar cut by a row's end says what it is on the next row too.
            let text = number == 0 ? label : "… " + label
            lines.append(##"<text transform="translate(\##(Self.f(piece.x + 1)),\##(Self.f(top + Self.barHeight + 10))) rotate(45)">\##(Figure.escaped(text))</text>"##)
        }
        return lines
    }

    /// Under each row: the time of its steps, one label at least 72 px from the last, and the
    /// first step after each gap; the line is cut at the gaps.
    private func axis() -> [String] {
        var lines: [String] = []
        var lastLabel: [Int: Double] = [:]
        var segmentStart: (row: Int, x: Double)? = nil
        let gapAfter = Set(gaps.map(\.after))
        func axisY(_ row: Int) -> Double { groupTop(row, groups + 1) + 8 }
        func closeSegment(at end: (row: Int, x: Double)) {
            guard let start = segmentStart else { return }
            if start.row == end.row {
                lines.append(##"<line x1="\##(Self.f(start.x))" y1="\##(Self.f(axisY(start.row)))" x2="\##(Self.f(end.x))" y2="\##(Self.f(axisY(start.row)))" stroke="#333"/>"##)
            } else {
                for row in start.row...end.row {
                    let x1 = row == start.row ? start.x : Self.left
                    let x2 = row == end.row ? end.x : Self.left + rowWidth
                    lines.append(##"<line x1="\##(Self.f(x1))" y1="\##(Self.f(axisY(row)))" x2="\##(Self.f(x2))" y2="\##(Self.f(axisY(row)))" stroke="#333"/>"##)
                }
            }
            segmentStart = nil
        }
        var afterGap = true
        for (index, entry) in entries.enumerated() {
            let (row, x) = point(place[index])
            if segmentStart == nil { segmentStart = (row, x) }
            if afterGap || x - (lastLabel[row] ?? -.infinity) >= 72 {
                let y = axisY(row)
                lines.append(##"<line x1="\##(Self.f(x))" y1="\##(Self.f(y))" x2="\##(Self.f(x))" y2="\##(Self.f(y + 5))" stroke="#333"/>"##)
                lines.append(##"<text x="\##(Self.f(x))" y="\##(Self.f(y + 17))" text-anchor="middle">\##(Self.milliseconds(entry.instant.nanoseconds - origin))</text>"##)
                lastLabel[row] = x
            }
            afterGap = false
            if gapAfter.contains(index) {
                closeSegment(at: (row, x))
                afterGap = true
            }
        }
        if let last = place.last { closeSegment(at: point(last)) }
        return lines
    }
}
