import ExampleSupport

/// The figures one strategy reached in a session: one row of the summary table.
public struct StrategyReport: Codable, Sendable, Equatable {
    /// Which strategy.
    public var strategy: Strategy
    /// How many times the display changed.
    public var updates: Int
    /// Median of the distance, in milliseconds, from each appearance to the nearest second.
    public var phaseErrorMedianMs: Double
    /// 99th percentile of the same distance, in milliseconds.
    public var phaseErrorP99Ms: Double
    /// Median time, in milliseconds, from the start of the shown second to its appearance
    /// (negative: it appeared early).
    public var lagMedianMs: Double
    /// The largest such lag, in milliseconds.
    public var lagMaxMs: Double
    /// Timer callouts per second: the wakeups this strategy costs when it runs alone.
    public var wakeupsPerSecond: Double

    /// Computes the row from the strategy's display updates and timer callouts.
    public init(strategy: Strategy, updates: [DisplayUpdate], fires: Int, elapsed: Double) {
        var phases = Samples()
        var lags = Samples()
        for update in updates {
            phases.append(abs(update.phase))
            lags.append(update.lag)
        }
        self.strategy = strategy
        self.updates = updates.count
        phaseErrorMedianMs = phases.median * 1000
        phaseErrorP99Ms = phases.p99 * 1000
        lagMedianMs = lags.median * 1000
        lagMaxMs = lags.maximum * 1000
        wakeupsPerSecond = elapsed > 0 ? Double(fires) / elapsed : 0
    }
}
