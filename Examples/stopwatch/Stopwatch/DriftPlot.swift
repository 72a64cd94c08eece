import RunLoopKitSVGPlot

/// `--plot`: how far each approach's shown time drifted from the wall clock while the
/// stopwatch ran, next to the frames dropped.
public enum DriftPlot {
    /// The figure of a session's ``StopwatchSession/driftTimeline``.
    ///
    /// - Parameter timeline: the session's drift samples.
    /// - Returns: two charts: both approaches' drift, and the dropped frames, over time.
    public static func figure(timeline: [(seconds: Double, computed: Double, counted: Double, dropped: Int)]) -> Figure {
        Figure(title: "stopwatch: computed from the start instant versus counting +0.01 per frame", charts: [
            Chart(title: "shown time minus wall-clock time", xLabel: "running time (s)", yLabel: "drift (ms)", series: [
                Chart.Series(label: "computed", points: timeline.map { Chart.Point(x: $0.seconds, y: $0.computed * 1000) }),
                Chart.Series(label: "counted", points: timeline.map { Chart.Point(x: $0.seconds, y: $0.counted * 1000) }),
            ]),
            Chart(title: "frames dropped so far", xLabel: "running time (s)", yLabel: "frames", series: [
                Chart.Series(label: "dropped", points: timeline.map { Chart.Point(x: $0.seconds, y: Double($0.dropped)) }),
            ]),
        ])
    }
}
