import RunLoopKit
import RunLoopKitTraceTimeline

/// The examples' `--trace-svg FILE`: the loop traced while the example runs, and its last
/// steps drawn as a timeline (TraceTimeline) when the run ends.
///
/// ```text
/// @Option(name: .customLong("trace-svg"), help: ArgumentHelp(TraceSVG.help, valueName: "file"))
/// var traceSVG: String?
/// ...
/// let timeline = TraceSVG(recording: loop, to: traceSVG, title: "stopwatch")
/// loop.runDefaultMode(forSeconds: duration)
/// try timeline?.write()
/// ```
public struct TraceSVG {
    /// The option's help text.
    public static let help = "Write a timeline of the loop's last \(capacity) steps (its trace) to this SVG file."
    /// How many steps the picture shows at most: the last ones (a few seconds of a 100 Hz timer).
    public static let capacity = 2_000

    private let path: String
    private let title: String
    private let trace: EVRunLoop.Trace

    /// Starts tracing `loop` when `path` is given; nil (and nothing traced) when it is not.
    ///
    /// - Parameters:
    ///   - loop: the loop to trace (its ``EVRunLoop/trace`` is replaced).
    ///   - path: the SVG file to write, from `--trace-svg`.
    ///   - title: the picture's title.
    public init?(recording loop: EVRunLoop, to path: String?, title: String) {
        guard let path else { return nil }
        self.path = path
        self.title = title
        trace = EVRunLoop.Trace(capacity: Self.capacity)
        loop.trace = trace
    }

    /// Writes the timeline of what the trace holds now.
    ///
    /// - Throws: the error of writing the file.
    public func write() throws {
        let dropped = trace.droppedCount
        let note = dropped > 0 ? " (the last \(trace.entries.count) steps)" : ""
        try TraceTimeline(title: title + note, trace: trace).write(toFile: path)
    }
}
