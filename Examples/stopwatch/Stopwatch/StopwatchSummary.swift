import ExampleSupport
import Foundation

/// Everything a stopwatch session measured: printed as a table, or as one JSON object.
public struct StopwatchSummary: Codable, Sendable, Equatable {
    /// Seconds the session ran.
    public var duration: Double
    /// Wall-clock seconds the stopwatch ran since its last reset: the reference.
    public var runningSeconds: Double
    /// The final display, for example `00:03.00`.
    public var shown: String
    /// The stopwatch's time, computed from its monotonic start instant.
    public var computedSeconds: Double
    /// The seed's time: 0.01 s added per update.
    public var countedSeconds: Double
    /// Computed minus reference: zero up to the clocks' reading difference.
    public var computedDriftSeconds: Double
    /// Counted minus reference: how far the seed's stopwatch drifted.
    public var countingDriftSeconds: Double
    /// Display updates while running.
    public var frames: Int
    /// Frames the frame timer dropped because the loop was busy.
    public var droppedFrames: Int
    /// Display updates per running second (100 when none was dropped).
    public var updatesPerSecond: Double
    /// Wakeups of the loop per second of the whole session.
    public var wakeupsPerSecond: Double
    /// CPU time (user + system) the session used, in seconds.
    public var cpuSeconds: Double
    /// How many simulated stalls ran.
    public var stalls: Int
    /// Milliseconds per stall.
    public var stallMilliseconds: Double
    /// The laps, as displayed.
    public var laps: [String]
    /// The decimal separator of the locale used.
    public var decimalSeparator: String

    /// The summary as one line of JSON with sorted keys.
    public func json() throws -> String {
        try SummaryJSON.encode(self)
    }

    /// The summary as a table for people.
    public func table() -> String {
        var lines = [
            String(format: "ran %.2f s; the stopwatch ran %.3f s by the wall clock and shows ", duration, runningSeconds)
                + shown,
            "",
            "approach                      time         drift",
            String(format: "computed from start instant   %9.3f s  %+10.3f ms",
                   computedSeconds, computedDriftSeconds * 1000),
            String(format: "counting +0.01 per update     %9.3f s  %+10.3f ms",
                   countedSeconds, countingDriftSeconds * 1000),
            "",
            String(format: "updates: %d (%.1f per second of 100), %d frames dropped", frames, updatesPerSecond, droppedFrames),
            String(format: "cost: %.2f wakeups per second, %.3f s CPU (%.1f%% of one core); the frame timer is paused while stopped",
                   wakeupsPerSecond, cpuSeconds, duration > 0 ? cpuSeconds / duration * 100 : 0),
        ]
        if stalls > 0 {
            lines.append(String(format: "simulated stalls: %d of %.0f ms", stalls, stallMilliseconds))
        }
        if !laps.isEmpty { lines.append("laps: " + laps.joined(separator: "  ")) }
        return lines.joined(separator: "\n")
    }
}
