import Foundation
import RunLoopKit
import RunLoopKitSVGPlot
import Testing
import TodoCountdown

@Suite("CountdownPlot")
struct CountdownPlotTests {
    /// The timeline of `strategy` over `seconds` of virtual time, 0.37 s into a second.
    func timeline(_ strategy: Strategy, seconds: Int64) -> [(seconds: Double, wakeups: Int, lag: Double?)] {
        let clock = EVVirtualClock(wallStart: Date(timeIntervalSince1970: 1_767_225_600.37))
        let loop = EVRunLoop(clock: clock)
        let list = TodoList.sample(count: 5, start: loop.wallNow, removesDone: false)
        let session = CountdownSession(strategy: strategy, list: list, loop: loop) { _ in }
        session.start()
        loop.run(mode: .default, for: .seconds(seconds))
        _ = session.stop()
        return session.timeline
    }

    @Test("--plot draws both strategies' lags and wakeups, labelled")
    func bothStrategies() {
        let figure = CountdownPlot.figure(runs: [(.poll, timeline(.poll, seconds: 5)), (.aligned, timeline(.aligned, seconds: 5))])
        #expect(figure.charts.count == 2)
        #expect(figure.charts.allSatisfy { $0.series.map(\.label) == ["poll", "aligned"] })
        let wakeups = figure.charts[1].series
        // Five seconds: poll wakes about 50 times, aligned about 5.
        #expect((45...51).contains(Int(wakeups[0].points.last?.y ?? 0)))
        #expect((4...6).contains(Int(wakeups[1].points.last?.y ?? 0)))
        #expect(figure.charts[0].series[1].points.allSatisfy { $0.y == 0 })  // aligned: on the second
    }
}
