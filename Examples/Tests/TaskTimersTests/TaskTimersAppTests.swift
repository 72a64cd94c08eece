import Foundation
import RunLoopKit
import TaskTimers
import Testing

@Suite("TaskTimersApp under virtual time")
struct TaskTimersAppTests {
    /// Plays `script` on a virtual loop and returns the report and every drawn state.
    func play(_ script: String, mode: RefreshMode) throws -> (report: SessionReport, states: [TaskScreenState]) {
        let loop = EVRunLoop(clock: EVVirtualClock())
        var states: [TaskScreenState] = []
        let app = TaskTimersApp(loop: loop, refreshMode: mode, draw: { states.append($0) })
        app.start()
        let runner = ScriptRunner(actions: try TaskAction.parse(script: script), loop: loop,
                                  perform: app.perform, finished: { app.perform(.quit) })
        runner.start()
        loop.run(mode: .default, for: .seconds(60))
        return (app.finish(), states)
    }

    static let scrollScript = "a,a,wait 1.5,s,wait 1,d,d,wait 2"

    @Test("with the default mode the refresh timer freezes while tracking")
    func defaultModeFreezes() throws {
        let report = try play(Self.scrollScript, mode: .default).report
        #expect(report.scrolls == 1)
        #expect(report.trackingSeconds == 2)
        #expect(report.ticksDuringTracking == 0)
        #expect(report.ticksMissedDuringTracking == 2)  // due at 2 s and 3 s, tracking 1.5...3.5 s
        #expect(report.longestRefreshGapSeconds >= 2.3)  // 1.1 s, then once when tracking ended at 3.5 s
    }

    @Test("with the common modes the refresh timer keeps firing while tracking")
    func commonModeKeepsFiring() throws {
        let report = try play(Self.scrollScript, mode: .common).report
        #expect(report.ticksDuringTracking == 2)
        #expect(report.ticksMissedDuringTracking == 0)
        #expect(report.longestRefreshGapSeconds <= 1.1)
    }

    @Test("tolerance lets the refresh timer fire up to 0.1 s late, never early")
    func refreshWithinTolerance() throws {
        let states = try play("a,wait 3.5", mode: .default).states
        // Ticks 1, 2, 3: each drawn with the rows computed at the tick.
        let ticks = Dictionary(states.map { ($0.ticks, $0.rowsAt) }, uniquingKeysWith: { first, _ in first })
        let start = try #require(ticks[0])
        for tick in 1...3 {
            let late = try #require(ticks[tick]).timeIntervalSince(start) - Double(tick)
            #expect(late >= 0 && late <= 0.1 + 1e-6, "tick \(tick) is \(late) s late")
        }
    }

    @Test("when every task is done, the refresh timer goes and a 60 fps animation plays")
    func allDoneAnimation() throws {
        let (report, states) = try play(Self.scrollScript, mode: .common)
        #expect(report.animations == 1)
        #expect((89...91).contains(report.framesDrawn))  // 1.5 s at 60 frames per second
        #expect(report.framesDropped == 0)
        let animating = states.filter { $0.celebrationBar != nil }
        #expect(!animating.isEmpty && animating.allSatisfy { !$0.hasRefreshTimer })
        #expect(report.refreshTicks == 4)  // at about 1, 2, 3 and 4 s; none after both were done at 4.5 s
    }

    @Test("adding a task after all were done stops the animation and creates a new refresh timer")
    func addAfterAllDone() throws {
        let report = try play("a,d,wait 0.5,a,wait 1.2", mode: .default).report
        #expect(report.refreshTimersCreated == 2)
        #expect(report.animations == 1)
        #expect((29...31).contains(report.framesDrawn))  // stopped after 0.5 s
        #expect(report.refreshTicks == 1)
    }

    @Test("the background pauses the animation's display link; paused frames are not dropped")
    func backgroundPausesAnimation() throws {
        let (report, states) = try play("a,d,wait 0.5,b,wait 0.5,b,wait 1.5", mode: .common)
        #expect(report.animations == 1)
        #expect(report.framesDropped == 0)
        // 1.5 s of animation by the clock, 0.5 s of it paused: about 60 frames drawn.
        #expect((59...61).contains(report.framesDrawn))
        #expect(!states.contains { $0.isBackground && $0.framesDrawn > 31 })
    }

    @Test("back from the background, rows are right at once because they come from dates")
    func background() throws {
        let (report, states) = try play("a,wait 1.05,b,wait 5,b,wait 0.5", mode: .common)
        #expect(report.backgroundSeconds == 5)
        #expect(report.refreshTimersCreated == 2)
        let back = try #require(states.indices.first { $0 > 0 && states[$0 - 1].isBackground && !states[$0].isBackground })
        #expect(states[back].rows.first?.ageSeconds == 6)  // 6.05 s after the task was added
        #expect(states[back].hasRefreshTimer)
        #expect(report.tickCountingLagSeconds == 5)  // one tick seen in 6.55 s
    }

    @Test("200 per-task timers: 0.1 s tolerance wakes the loop a fraction as often")
    func toleranceSavesWakeups() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let comparison = ToleranceComparison(timers: 200, tolerance: 0.1)
        let without = comparison.run(on: loop, tolerance: 0, for: .seconds(10))
        let with = comparison.run(on: loop, tolerance: 0.1, for: .seconds(10))
        #expect(without.fires == 2000)
        #expect(with.fires == 2000)
        #expect((1999...2001).contains(without.wakeups))
        #expect(with.wakeupsPerSecond <= 11)
        #expect(without.earliestMs == 0 && without.latestMs == 0)
        #expect(with.earliestMs >= 0 && with.latestMs <= 100)
    }
}
