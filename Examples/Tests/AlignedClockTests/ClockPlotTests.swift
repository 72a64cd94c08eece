import AlignedClock
import Foundation
import RunLoopKit
import Testing

/// `--plot`: the compared strategies' lags, side by side, on a virtual clock.
@Suite struct ClockPlotTests {
    @Test("the compare run's plot has one labelled series per strategy, with every update")
    func threeLabelledSeries() {
        let clock = EVVirtualClock()
        clock.advance(by: .milliseconds(250))
        let loop = EVRunLoop(clock: clock)
        let configuration = ClockConfiguration(compare: true, naiveStartDelay: 0.33)
        let session = ClockSession(loop: loop, configuration: configuration)
        let start = loop.wallNow
        session.start()
        loop.run(mode: .default, for: .seconds(5))
        let figure = ClockPlot.figure(updates: session.updates, strategies: configuration.strategies, start: start)
        _ = session.finish()

        #expect(figure.charts.map { $0.series.map(\.label) } == [["naive"], ["polling"], ["aligned"]])
        #expect(figure.charts.map { $0.series[0].points.count } == [4, 5, 5])
        // Started 0.58 s past a second, the naive timer shows each second 580 ms late.
        #expect(figure.charts[0].series[0].points.allSatisfy { abs($0.y - 580) < 0.001 })
        #expect(figure.charts[2].series[0].points.allSatisfy { abs($0.y) < 0.001 })
        let svg = figure.svg()
        for label in [">naive<", ">polling<", ">aligned<"] { #expect(svg.contains(label)) }
    }
}
