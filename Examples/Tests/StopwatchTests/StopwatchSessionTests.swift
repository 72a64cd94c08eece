import Foundation
import RunLoopKit
import Stopwatch
import Testing

/// The stopwatch driven on a virtual clock: exact drift, frames and laps, no sleeping.
@Suite struct StopwatchSessionTests {
    private func makeSession(_ configuration: StopwatchConfiguration) -> (EVRunLoop, StopwatchSession) {
        let clock = EVVirtualClock()
        clock.advance(by: .milliseconds(3))  // start between two frames
        let loop = EVRunLoop(clock: clock)
        return (loop, StopwatchSession(loop: loop, configuration: configuration) { clock.advance(by: $0) })
    }

    @Test func stallsMakeTheCounterDriftButNotTheComputedTime() {
        let (loop, session) = makeSession(StopwatchConfiguration(startsAtOnce: true, stallMilliseconds: 45))
        session.start()
        loop.run(mode: .default, for: .seconds(10))
        let summary = session.finish()

        #expect(abs(summary.runningSeconds - 10) < 1e-6)
        #expect(abs(summary.computedDriftSeconds) < 1e-6)
        #expect(summary.shown == "00:10.00")
        // Nine stalls of 45 ms each cost 4 frames, that is 0.04 s of counting.
        #expect(summary.stalls == 9)
        #expect(summary.droppedFrames == 36)
        #expect(abs(summary.countingDriftSeconds - -0.36) < 0.011)
        #expect(summary.frames == 1000 - 36)
    }

    @Test("--plot: the drift timeline and its figure show the counter falling behind, the computed time not")
    func driftTimelineAndPlot() {
        let (loop, session) = makeSession(StopwatchConfiguration(startsAtOnce: true, stallMilliseconds: 45))
        session.start()
        loop.run(mode: .default, for: .seconds(10))
        _ = session.finish()
        let timeline = session.driftTimeline
        #expect(timeline.count >= 90)
        #expect(timeline.allSatisfy { abs($0.computed) < 0.011 })
        #expect(abs((timeline.last?.counted ?? 0) - -0.36) < 0.05)
        #expect(timeline.last?.dropped == 36)
        let figure = DriftPlot.figure(timeline: timeline)
        #expect(figure.charts.map { $0.series.map(\.label) } == [["computed", "counted"], ["dropped"]])
    }

    @Test func withoutStallsEveryUpdateArrives() {
        let (loop, session) = makeSession(StopwatchConfiguration(startsAtOnce: true))
        session.start()
        loop.run(mode: .default, for: .seconds(5))
        let summary = session.finish()
        #expect(summary.frames == 500)
        #expect(summary.droppedFrames == 0)
        #expect(abs(summary.updatesPerSecond - 100) < 0.01)
        #expect(abs(summary.computedDriftSeconds) < 1e-6)
        // Every frame arrived, so the counter is right too (the first frame's 3 ms early count
        // and the last frame's 3 ms before the end cancel out).
        #expect(abs(summary.countingDriftSeconds) < 1e-6)
    }

    @Test func consecutiveFramesShowConsecutiveHundredths() {
        let (loop, session) = makeSession(StopwatchConfiguration(startsAtOnce: true))
        var shown: [Int64] = []
        session.onEvent = { event, session in
            if event == .frame { shown.append(ElapsedFormat.hundredths(of: session.shown)) }
        }
        session.start()
        loop.run(mode: .default, for: .seconds(1))
        _ = session.finish()
        #expect(shown.count == 100)
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $1 == $0 + 1 })
    }

    @Test func scriptedActionsStopLapAndReset() {
        let script = [
            ScheduledAction(delay: 1.5, action: .lap), ScheduledAction(delay: 2, action: .stop),
            ScheduledAction(delay: 3, action: .start), ScheduledAction(delay: 3.25, action: .lap),
        ]
        let (loop, session) = makeSession(StopwatchConfiguration(startsAtOnce: true, script: script))
        session.start()
        loop.run(mode: .default, for: .seconds(4))
        let summary = session.finish()
        #expect(summary.laps == ["00:01.50", "00:02.25"])
        #expect(summary.shown == "00:03.00")
        #expect(abs(summary.runningSeconds - 3) < 1e-6)
        #expect(summary.frames == 300)
    }

    @Test func stoppedStopwatchCostsNoWakeups() {
        let (loop, session) = makeSession(StopwatchConfiguration(startsAtOnce: false, script: [
            ScheduledAction(delay: 5, action: .quit),
        ]))
        session.start()
        loop.run(mode: .default, for: .seconds(10))
        let summary = session.finish()
        #expect(summary.frames == 0)
        #expect(summary.shown == "00:00.00")
        #expect(loop.statistics.wakeups <= 2)
    }

    @Test func resetStartsOverAndQuitStopsTheLoop() {
        let script = [
            ScheduledAction(delay: 1, action: .lap), ScheduledAction(delay: 2, action: .reset),
            ScheduledAction(delay: 2.5, action: .toggle), ScheduledAction(delay: 3.5, action: .quit),
        ]
        let (loop, session) = makeSession(StopwatchConfiguration(startsAtOnce: true, script: script))
        session.start()
        let result = loop.run(mode: .default, for: .seconds(10))
        let summary = session.finish()
        #expect(result == .stopped)
        #expect(summary.laps.isEmpty)
        #expect(summary.shown == "00:01.00")
        #expect(abs(summary.duration - 3.5) < 1e-6)
    }
}
