/// What one strategy's run measured; printed in the summary and encoded for `--json`.
public struct StrategyReport: Codable, Hashable, Sendable {
    /// The strategy measured.
    public var strategy: Strategy
    /// Seconds the strategy ran, on the loop's monotonic clock.
    public var durationSeconds: Double
    /// Timer-driven redraws (key presses that only move the selection are not counted).
    public var redraws: Int
    /// Displayed seconds that were never shown.
    public var skippedSeconds: Int
    /// Redraws that showed the same second as the redraw before.
    public var repeatedSeconds: Int
    /// Loop wakeups (waits that slept) while the strategy ran.
    public var wakeups: Int
    /// ``wakeups`` per second of ``durationSeconds``.
    public var wakeupsPerSecond: Double
    /// Timer callouts while the strategy ran.
    public var timerFires: Int
    /// Median lag, in milliseconds, between a second starting and the redraw showing it.
    public var lagMedianMs: Double?
    /// 99th percentile of that lag, in milliseconds.
    public var lagP99Ms: Double?

    /// One line for the human-readable summary.
    public var line: String {
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "n/a" }
        let name = strategy.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
        return name + String(format: "%5.1f s  redraws %3d  skipped %d  repeated %d  wakeups %5.2f/s",
                             durationSeconds, redraws, skippedSeconds, repeatedSeconds, wakeupsPerSecond)
            + "  lag median \(ms(lagMedianMs)), p99 \(ms(lagP99Ms))"
    }
}
