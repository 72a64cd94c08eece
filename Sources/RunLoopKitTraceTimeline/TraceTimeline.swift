import Foundation
import RunLoopKit
import RunLoopKitSVGPlot

/// A loop's trace drawn as an SVG timeline of its passes: what `__CFRunLoopRun` did, to be seen
/// rather than imagined.
///
/// Each run of the loop gets two lanes under a band naming its mode: the pass lane, where
/// each notification point (``EVRunLoop/Activity``) and each return is a tick, and the
/// callout lane, where each callout (observer, timer, source, block, job, main queue) is a
/// bar as long as it ran, labelled as in ``EVRunLoop/Trace/lines``. A run nested in a callout
/// gets the lanes below its caller's, and the caller's bar spans it. Waits are gaps: a grey
/// box of fixed width saying how long the loop slept, the deadline it asked for and why it
/// woke, with the wake marked by a triangle. Awake time is drawn to scale (the legend says
/// how many microseconds a pixel is), each step at least a few pixels after the one before,
/// so steps at one instant (a virtual clock's) stay apart. Long traces wrap into rows. The
/// axis under each row gives the time of its steps, in milliseconds since the first one.
///
/// ```swift
/// let loop = EVRunLoop(clock: EVVirtualClock())
/// let trace = EVRunLoop.Trace()
/// loop.trace = trace
/// loop.add(EVTimer(interval: 0.05, repeats: false, label: "once") { _ in }, forMode: .default)
/// loop.run(mode: .default, for: .seconds(1))
/// let timeline = TraceTimeline(title: "One timer", trace: trace)
/// try timeline.write(toFile: NSTemporaryDirectory() + "timeline.svg")
/// ```
///
/// Elements carry a class for tools that read the picture: `callout` (the bars), `activity`
/// (the ticks), `sleep` (the gaps), `wake` (the marks), `run` (the mode bands).
/// There is no CF counterpart; Instruments' run loop track and Chrome's trace viewer draw
/// something alike.
public struct TraceTimeline: Sendable {
    /// The title above the timeline.
    public var title: String
    /// The steps to draw, oldest first, as ``EVRunLoop/Trace/entries`` gives them.
    public var entries: [EVRunLoop.Trace.Entry]

    /// Creates a timeline of `entries`.
    ///
    /// - Parameters:
    ///   - title: the title above the timeline.
    ///   - entries: the steps to draw, oldest first.
    public init(title: String, entries: [EVRunLoop.Trace.Entry]) {
        self.title = title
        self.entries = entries
    }

    /// Creates a timeline of what `trace` holds now.
    ///
    /// - Parameters:
    ///   - title: the title above the timeline.
    ///   - trace: the trace whose ``EVRunLoop/Trace/entries`` to draw.
    public init(title: String, trace: EVRunLoop.Trace) {
        self.init(title: title, entries: trace.entries)
    }

    /// The timeline as an SVG document.
    ///
    /// - Returns: the SVG text, one element per line.
    public func svg() -> String {
        TimelineDrawing(entries: entries).svg(title: title)
    }

    /// Writes ``svg()`` to `path`.
    ///
    /// - Parameter path: the file to create or replace.
    /// - Throws: the error of writing the file.
    public func write(toFile path: String) throws {
        try svg().write(toFile: path, atomically: true, encoding: .utf8)
    }
}
