import RunLoopKit
import RunLoopKitSVGPlot
import TaskTimers
import Testing

@Suite struct TolerancePlotTests {
    @Test("--plot: the wakes of both tolerance runs, labelled, per second and so far")
    func bothRuns() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let comparison = ToleranceComparison(timers: 50)
        var without: [Double] = []
        var with: [Double] = []
        let first = comparison.run(on: loop, tolerance: 0, for: .seconds(3)) { without.append($0) }
        let second = comparison.run(on: loop, tolerance: 0.1, for: .seconds(3)) { with.append($0) }
        #expect(without.count == first.wakeups)
        #expect(with.count == second.wakeups)
        let figure = TolerancePlot.figure(runs: [("none", first.seconds, without), ("0.1 s", second.seconds, with)])
        #expect(figure.charts.map { $0.series.map(\.label) } == [["none", "0.1 s"], ["none", "0.1 s"]])
        let perSecond = figure.charts[1].series
        #expect(perSecond[0].points.map(\.y) == [50, 50, 50])
        #expect(perSecond[1].points.allSatisfy { $0.y <= 11 })
    }
}
