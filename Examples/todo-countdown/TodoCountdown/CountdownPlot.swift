import RunLoopKitSVGPlot

/// `--plot`: the strategies side by side — how late each new second reached the screen, and
/// how often the loop woke for it.
public enum CountdownPlot {
    /// The figure of the strategies' timelines.
    ///
    /// - Parameter runs: each strategy with its session's ``CountdownSession/timeline``.
    /// - Returns: two charts: the lag of each new second, and the loop's wakeups so far.
    public static func figure(runs: [(strategy: Strategy, timeline: [(seconds: Double, wakeups: Int, lag: Double?)])]) -> Figure {
        let lags = runs.map { run in
            Chart.Series(label: run.strategy.rawValue, points: run.timeline.compactMap { sample in
                sample.lag.map { Chart.Point(x: sample.seconds, y: $0 * 1000) }
            })
        }
        let wakeups = runs.map { run in
            Chart.Series(label: run.strategy.rawValue, points: run.timeline.map {
                Chart.Point(x: $0.seconds, y: Double($0.wakeups))
            })
        }
        return Figure(title: "todo-countdown: 0.1 s polling versus an aligned 1 s timer", charts: [
            Chart(title: "how late each new second was drawn", xLabel: "time since start (s)",
                  yLabel: "lag (ms)", series: lags),
            Chart(title: "loop wakeups (slope: wakeups per second)", xLabel: "time since start (s)",
                  yLabel: "wakeups since start", series: wakeups),
        ])
    }
}
