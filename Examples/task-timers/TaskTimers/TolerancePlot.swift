import RunLoopKitSVGPlot

/// `--plot` with `--compare-tolerance`: the loop's wakes without and with tolerance, side by side.
public enum TolerancePlot {
    /// The figure of the two runs' wakes.
    ///
    /// - Parameter runs: each run's label, its length in seconds, and the seconds (since its
    ///   start) of its wakes.
    /// - Returns: two charts: wakeups so far, and wakeups in each whole second.
    public static func figure(runs: [(label: String, seconds: Double, wakes: [Double])]) -> Figure {
        let cumulative = runs.map { run in
            Chart.Series(label: run.label, points: run.wakes.enumerated().map { Chart.Point(x: $1, y: Double($0 + 1)) })
        }
        let perSecond = runs.map { run in
            let counts = (0..<max(1, Int(run.seconds.rounded()))).map { second in run.wakes.filter { Int($0.rounded(.down)) == second }.count }
            return Chart.Series(label: run.label, points: counts.enumerated().map {
                Chart.Point(x: Double($0) + 0.5, y: Double($1))
            })
        }
        return Figure(title: "task-timers: 1 s timers of every task, without and with tolerance", charts: [
            Chart(title: "loop wakeups so far", xLabel: "time since the run started (s)",
                  yLabel: "wakeups", series: cumulative),
            Chart(title: "wakeups in each second", xLabel: "time since the run started (s)",
                  yLabel: "wakeups per second", series: perSecond),
        ])
    }
}
