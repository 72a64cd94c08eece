import Foundation
import RunLoopKitSVGPlot

/// `--plot`: each strategy's display lag over the run, one chart per strategy side by side
/// (their scales differ by four orders of magnitude).
public enum ClockPlot {
    /// The figure of a session's updates.
    ///
    /// - Parameters:
    ///   - updates: every display update, per strategy (``ClockSession/updates``).
    ///   - strategies: the strategies, in the order to draw them.
    ///   - start: the wall-clock moment the session started: time zero.
    /// - Returns: one chart per strategy, the lag of each update in milliseconds over time.
    public static func figure(updates: [Strategy: [DisplayUpdate]], strategies: [Strategy], start: Date) -> Figure {
        let charts = strategies.map { strategy in
            let points = (updates[strategy] ?? []).map { update in
                Chart.Point(x: update.tick.timeIntervalSince(start), y: update.lag * 1000)
            }
            return Chart(title: strategy.title, xLabel: "time since start (s)",
                         yLabel: "displayed second's lag (ms)",
                         series: [Chart.Series(label: strategy.rawValue, points: points)])
        }
        return Figure(title: "aligned-clock: how late each displayed second appeared", charts: charts)
    }
}
