import Foundation
import Glibc
@testable import RunLoopKit
import Testing

/// Attacks on Swift's dynamic exclusivity checks, which issue 38 turned back on for 28 stored
/// properties (the engine's and its mode states', a source's, timer's, observer's and
/// trace's, the backend's and the descriptor registry's). In each case user code re-enters
/// the loop where the loop may be inside an access to one of those fields: a callout, a
/// nested run, or the deinit of an object that a callout or handler captured, run when the
/// loop lets that go. An overlap traps ("Simultaneous accesses"): the child process dies of
/// a signal. Otherwise the child checks what the loop did, as CF does it where CF has the
/// case, and prints a FAIL line for each difference. The attacks are in
/// ``ExclusivityAttacks``, one function per case.
@Suite("Real time: exclusivity at the edges, callouts and deinits re-entering the loop",
       .timeLimit(.minutes(10)))
struct ExclusivityEdgeTests {
    /// One attack: the field it aims at, and how user code reaches it.
    enum Attack: String, CaseIterable, Codable, Sendable, CustomTestStringConvertible {
        case stallStopDeinitStops = "stallWatch: stopReportingStalls() drops a handler whose object's deinit stops again"
        case stallReplaceDeinitRuns = "stallWatch: reportStalls replaces a handler whose object's deinit runs the loop"
        case stallStopInCallout = "stallWatch: a callout stops the reports; the handler's object's deinit starts new ones"
        case traceSwappedInCallout = "trace: a callout replaces the trace, then runs a new mode nested"
        case resetsInNestedCallout = "stats, measuring, awakeSince: a nested callout resets statistics and metrics"
        case observersChangedInNotification = "observerSet, observerMask: an observer adds, removes and invalidates others"
        case observerNestedRun = "isFiring: an observer runs its own mode nested"
        case observerDroppedDeinitAdds = "observerSet: a one-shot observer's object's deinit adds an observer and a timer"
        case timerDroppedDeinitRuns = "releasesAfterFiring: a one-shot timer's object's deinit adds a timer and runs the loop"
        case timerMovesModesInCallout = "firstPlace: a timer in two modes moves itself to a third in its callout"
        case timerInvalidatedInNestedRun = "releasesAfterFiring: a nested callout invalidates the firing timer, its last holder"
        case modesMadeInCallout = "modes, lastResolved, lastRunState: a callout makes a common mode and a new mode and runs both"
        case sourceDroppedDeinitAdds = "state, watchToken: a manual source invalidates itself; its object's deinit adds another"
        case descriptorDroppedDeinitReuses = "state, watchToken: a descriptor source closes its fd; its object's deinit reuses the number"
        case blockDroppedDeinitStops = "blocks: a block's object's deinit performs a block and stops the run"
        case jobRunsLoopNested = "runningJobs: a job of the loop's executor runs the loop nested; a task it starts waits"
        case inboxDuringNestedRun = "spareTasks: another thread's adds are drained by a run nested in a callout"
        case threadExitDeinits = "modes, armedState, stallWatch: a thread's exit drops objects whose deinits call the loop"
        case threadExitObserverInvalidated = "modes: a thread's exit drops an object whose deinit invalidates an observer"
        var testDescription: String { rawValue }
    }

    @Test("each attack: no trap, and the loop does what CF does", arguments: Attack.allCases)
    func attack(_ attack: Attack) async {
        // A trap is a signal; a difference is a FAIL line (the exit status stays 0, so that
        // the lines reach this side).
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [attack] in
            for failure in ExclusivityAttacks.run(attack) {
                FileHandle.standardError.write(Data("FAIL: \(failure)\n".utf8))
            }
            exit(0)
        }
        let text = standardError(result)
        #expect(!text.contains("FAIL"), "\(text)")
    }
}

/// Runs `onDeinit` when its last reference goes: the user's object that a callout or
/// handler captured, whose deinit calls back into the loop.
final class DeinitProbe: Sendable {
    private let onDeinit: @Sendable () -> Void
    init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    func touch() {}
    deinit { onDeinit() }
}

/// The attacks of ``ExclusivityEdgeTests``, each run in a child process; each returns what
/// it found different from the expected behaviour (empty: as expected).
enum ExclusivityAttacks {
    static func run(_ attack: ExclusivityEdgeTests.Attack) -> [String] {
        var failures: [String] = []
        func check(_ condition: Bool, _ what: @autoclosure () -> String) { if !condition { failures.append(what()) } }
        switch attack {
        case .stallStopDeinitStops: stallStopDeinitStops(check)
        case .stallReplaceDeinitRuns: stallReplaceDeinitRuns(check)
        case .stallStopInCallout: stallStopInCallout(check)
        case .traceSwappedInCallout: traceSwappedInCallout(check)
        case .resetsInNestedCallout: resetsInNestedCallout(check)
        case .observersChangedInNotification: observersChangedInNotification(check)
        case .observerNestedRun: observerNestedRun(check)
        case .observerDroppedDeinitAdds: observerDroppedDeinitAdds(check)
        case .timerDroppedDeinitRuns: timerDroppedDeinitRuns(check)
        case .timerMovesModesInCallout: timerMovesModesInCallout(check)
        case .timerInvalidatedInNestedRun: timerInvalidatedInNestedRun(check)
        case .modesMadeInCallout: modesMadeInCallout(check)
        case .sourceDroppedDeinitAdds: sourceDroppedDeinitAdds(check)
        case .descriptorDroppedDeinitReuses: descriptorDroppedDeinitReuses(check)
        case .blockDroppedDeinitStops: blockDroppedDeinitStops(check)
        case .jobRunsLoopNested: jobRunsLoopNested(check)
        case .inboxDuringNestedRun: inboxDuringNestedRun(check)
        case .threadExitDeinits: threadExitDeinits(check)
        case .threadExitObserverInvalidated: threadExitObserverInvalidated(check)
        }
        return failures
    }

    typealias Check = (Bool, @autoclosure () -> String) -> Void

    static func virtualLoop() -> EVRunLoop { EVRunLoop(clock: EVVirtualClock()) }

    /// A callout long enough on the real clock to pass a 1 ns stall threshold.
    static func busy() {
        let start = DispatchTime.now().uptimeNanoseconds
        while DispatchTime.now().uptimeNanoseconds - start < 20_000 {}
    }

    // MARK: The stall watch

    static func stallStopDeinitStops(_ check: Check) {
        let loop = virtualLoop()
        let reports = Counter(), deinits = Counter()
        do {
            let probe = DeinitProbe { deinits.add(); loop.stopReportingStalls() }
            loop.reportStalls(over: .nanoseconds(1)) { _ in probe.touch(); reports.add() }
        }
        loop.stopReportingStalls()
        check(deinits.value == 1, "the handler's object was not released by stopReportingStalls() (\(deinits.value))")
        loop.add(EVTimer(interval: 1, repeats: false) { _ in busy() }, forMode: .default)
        loop.advance(by: .seconds(2))
        check(reports.value == 0, "reports stopped, yet \(reports.value) came")
    }

    static func stallReplaceDeinitRuns(_ check: Check) {
        let loop = virtualLoop()
        let fired = Counter(), first = Counter(), second = Counter()
        do {
            let probe = DeinitProbe {
                loop.add(EVTimer(interval: 0, repeats: false, label: "nested") { _ in fired.add(); busy() }, forMode: "nested")
                loop.runUntilIdle(inMode: "nested")
            }
            loop.reportStalls(over: .nanoseconds(1)) { _ in probe.touch(); first.add() }
        }
        loop.reportStalls(over: .nanoseconds(1)) { stall in if stall.isFinished, stall.label == "nested" { second.add() } }
        check(fired.value == 1, "the timer of the run in the deinit fired \(fired.value) times, not once")
        check(first.value == 0, "the replaced reports saw \(first.value) callouts")
        check(second.value == 1, "the new reports saw the deinit's callout \(second.value) times, not once")
        loop.stopReportingStalls()
    }

    static func stallStopInCallout(_ check: Check) {
        let loop = virtualLoop()
        let later = Counter(), deinits = Counter()
        do {
            let probe = DeinitProbe {
                deinits.add()
                loop.reportStalls(over: .nanoseconds(1)) { stall in if stall.isFinished, stall.label == "later" { later.add() } }
            }
            loop.reportStalls(over: .nanoseconds(1)) { _ in probe.touch() }
        }
        loop.add(EVTimer(interval: 1, repeats: false, label: "stopper") { _ in loop.stopReportingStalls() }, forMode: .default)
        loop.add(EVTimer(interval: 2, repeats: false, label: "later") { _ in busy() }, forMode: .default)
        loop.advance(by: .seconds(3))
        check(deinits.value == 1, "the stopped reports' handler was released \(deinits.value) times, not once")
        check(later.value == 1, "the reports started in the deinit saw the later callout \(later.value) times, not once")
        loop.stopReportingStalls()
    }

    // MARK: The trace, statistics and metrics

    static func traceSwappedInCallout(_ check: Check) {
        let loop = virtualLoop()
        let old = EVRunLoop.Trace(), new = EVRunLoop.Trace()
        loop.trace = old
        // An observer's callout, not a timer's: a trace is not Sendable.
        loop.add(EVObserver(activities: .beforeTimers, repeats: false, label: "swap") { _, _ in
            loop.trace = new
            loop.add(EVTimer(interval: 0, repeats: false, label: "inner") { _ in }, forMode: "nested")
            loop.runUntilIdle(inMode: "nested")
        }, forMode: .default)
        loop.add(EVTimer(interval: 1, repeats: false, label: "after") { _ in }, forMode: .default)
        loop.advance(by: .seconds(2))
        loop.trace = nil
        check(old.lines.contains("swap@beforeTimers"), "the old trace lacks the swapping callout: \(old.lines)")
        check(!old.lines.contains("timer(inner)"), "the old trace recorded the nested callout: \(old.lines)")
        check(new.lines.contains("timer(inner)") && new.lines.contains("timer(after)"),
              "the new trace lacks the nested or the later callout: \(new.lines)")
        check(!new.lines.contains("swap@beforeTimers"), "the new trace recorded the callout begun before it: \(new.lines)")
    }

    static func resetsInNestedCallout(_ check: Check) {
        let loop = virtualLoop()
        loop.recordsMetrics = true
        loop.add(EVTimer(interval: 1, repeats: false, label: "outer") { _ in
            loop.add(EVTimer(interval: 0, repeats: false, label: "inner") { _ in
                loop.resetStatistics()
                loop.resetMetrics()
                loop.recordsMetrics = false
                loop.recordsMetrics = true
            }, forMode: "nested")
            loop.runUntilIdle(inMode: "nested")
        }, forMode: .default)
        loop.add(EVTimer(interval: 2, repeats: false, label: "after") { _ in }, forMode: .default)
        loop.advance(by: .seconds(3))
        let statistics = loop.statistics
        check(statistics.timerFires == 1, "statistics count \(statistics.timerFires) timer fires since the reset, not 1")
        let metrics = loop.metrics
        check(metrics.resets == 1, "metrics count \(metrics.resets) resets, not 1")
        check(metrics.passes >= 1, "metrics count no pass since the reset")
        loop.recordsMetrics = false
    }

    // MARK: Observers

    static func observersChangedInNotification(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        let late = EVObserver(activities: .beforeTimers, order: 3) { _, _ in lines.append("D") }
        let removed = EVObserver(activities: .beforeTimers, order: 1) { _, _ in lines.append("B") }
        let invalidated = EVObserver(activities: .beforeTimers, order: 2) { _, _ in lines.append("C") }
        let first = EVObserver(activities: .beforeTimers, order: 0) { _, _ in
            lines.append("A")
            guard lines.count == 1 else { return }
            loop.add(late, forMode: .default)
            loop.remove(removed, forMode: .default)
            invalidated.invalidate()
        }
        for observer in [first, removed, invalidated] { loop.add(observer, forMode: .default) }
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        _ = loop.run(mode: .default, for: .zero)
        // CF's __CFRunLoopDoObservers: a snapshot, each observer skipped only if invalid (a
        // removed one still fires in this notification), an added one from the next.
        check(lines.lines == ["A", "B"], "first notification: \(lines.lines), not [A, B]")
        _ = loop.run(mode: .default, for: .zero)
        check(lines.lines == ["A", "B", "A", "D"], "second notification: \(lines.lines), not [A, B, A, D]")
    }

    static func observerNestedRun(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        let nester = EVObserver(activities: .beforeTimers, order: 0) { _, _ in
            lines.append("A")
            guard lines.count == 1 else { return }
            _ = loop.run(mode: .default, for: .zero)
        }
        let other = EVObserver(activities: .beforeTimers, order: 1) { _, _ in lines.append("B") }
        loop.add(nester, forMode: .default)
        loop.add(other, forMode: .default)
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        _ = loop.run(mode: .default, for: .zero)
        // CF: a firing observer is not called again by a nested run (__CFRunLoopObserverIsFiring).
        check(lines.lines == ["A", "B", "B"], "notifications: \(lines.lines), not [A, B, B]")
    }

    static func observerDroppedDeinitAdds(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        do {
            let probe = DeinitProbe {
                lines.append("deinit")
                loop.add(EVObserver(activities: .beforeTimers) { _, _ in lines.append("new") }, forMode: .default)
                loop.add(EVTimer(interval: 0, repeats: false) { _ in lines.append("timer") }, forMode: .default)
            }
            loop.add(EVObserver(activities: .beforeTimers, repeats: false) { _, _ in probe.touch(); lines.append("once") },
                     forMode: .default)
        }
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        _ = loop.run(mode: .default, for: .zero)
        _ = loop.run(mode: .default, for: .zero)
        check(lines.lines == ["once", "deinit", "timer", "new"], "calls: \(lines.lines), not [once, deinit, timer, new]")
    }

    // MARK: Timers

    static func timerDroppedDeinitRuns(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        do {
            let probe = DeinitProbe {
                lines.append("deinit")
                loop.add(EVTimer(interval: 0, repeats: false) { _ in lines.append("added") }, forMode: .default)
                loop.add(EVTimer(interval: 0, repeats: false) { _ in lines.append("side") }, forMode: "side")
                loop.runUntilIdle(inMode: "side")
            }
            loop.add(EVTimer(interval: 1, repeats: false) { _ in probe.touch(); lines.append("once") }, forMode: .default)
        }
        loop.advance(by: .seconds(2))
        check(lines.lines == ["once", "deinit", "side", "added"], "calls: \(lines.lines), not [once, deinit, side, added]")
    }

    static func timerMovesModesInCallout(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        let timer = EVTimer(interval: 1, repeats: true) { timer in
            let mode = loop.currentMode
            lines.append(mode == .default ? "default" : mode?.rawValue ?? "none")
            guard mode == .default else { return }
            loop.remove(timer, forMode: .default)
            loop.add(timer, forMode: "third")
            loop.runUntilIdle(inMode: "other")  // the firing timer does not fire again nested
        }
        loop.add(timer, forMode: .default)
        loop.add(timer, forMode: "other")
        loop.advance(by: .seconds(1.5))
        loop.advance(by: .seconds(1), inMode: "other")
        loop.advance(by: .seconds(1), inMode: "third")
        loop.advance(by: .seconds(1))
        timer.invalidate()
        check(lines.lines == ["default", "other", "third"], "fires by mode: \(lines.lines), not [default, other, third]")
    }

    static func timerInvalidatedInNestedRun(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        let slot = LoopBox<EVTimer?>(nil)
        do {
            let probe = DeinitProbe { lines.append("deinit") }
            let outer = EVTimer(interval: 1, repeats: true) { _ in
                probe.touch()
                lines.append("outer")
                loop.add(EVTimer(interval: 0, repeats: false) { _ in
                    lines.append("inner")
                    slot.value.take()?.invalidate()
                }, forMode: "nested")
                loop.runUntilIdle(inMode: "nested")
                lines.append("outer returns")
            }
            slot.value = outer
            loop.add(outer, forMode: .default)
        }
        loop.advance(by: .seconds(3))
        check(lines.lines == ["outer", "inner", "outer returns", "deinit"],
              "calls: \(lines.lines), not [outer, inner, outer returns, deinit]")
    }

    // MARK: Modes

    static func modesMadeInCallout(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        let common = EVTimer(interval: 1, repeats: true) { _ in lines.append("common in \(loop.currentMode?.rawValue ?? "none")") }
        loop.add(common, forMode: .common)
        loop.add(EVTimer(interval: 0.5, repeats: false) { _ in
            loop.addCommonMode("late")
            loop.add(EVTimer(interval: 0, repeats: false) { _ in lines.append("fresh") }, forMode: "fresh")
            loop.runUntilIdle(inMode: "fresh")
            loop.advance(by: .seconds(0.75), inMode: "late")
        }, forMode: .default)
        loop.advance(by: .seconds(1.5))
        common.invalidate()
        check(lines.lines == ["fresh", "common in late"], "calls: \(lines.lines), not [fresh, common in late]")
        check(loop.commonModes.contains("late"), "the common modes lack the one added in a callout")
    }

    // MARK: Sources

    static func sourceDroppedDeinitAdds(_ check: Check) {
        let loop = virtualLoop()
        let lines = Recorder()
        do {
            let probe = DeinitProbe {
                lines.append("deinit")
                let next = EVSource { _ in lines.append("next") }
                loop.add(next, forMode: .default)
                next.signal()
            }
            let source = EVSource { source in
                probe.touch()
                lines.append("once")
                source.invalidate()
            }
            loop.add(source, forMode: .default)
            source.signal()
        }
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        _ = loop.run(mode: .default, for: .zero)
        _ = loop.run(mode: .default, for: .zero)
        check(lines.lines == ["once", "deinit", "next"], "calls: \(lines.lines), not [once, deinit, next]")
    }

    static func descriptorDroppedDeinitReuses(_ check: Check) {
        let loop = EVRunLoop.current
        let lines = Recorder()
        let numbers = LoopBox<[Int32]>([])
        let first = pipePair()
        do {
            let probe = DeinitProbe {
                lines.append("deinit")
                let second = pipePair(readEndAt: first.read)  // closed just before
                numbers.value.append(second.read)
                guard let source = try? EVSource(fileDescriptor: second.read, closesDescriptor: true, handler: { source in
                    var byte: UInt8 = 0
                    _ = read(source.fileDescriptor ?? -1, &byte, 1)
                    lines.append("second \(byte)")
                    source.invalidate()
                    loop.stop()
                }) else { return }
                loop.add(source, forMode: .default)
                _ = write(second.write, [UInt8(2)], 1)
                close(second.write)
            }
            let source = try? EVSource(fileDescriptor: first.read, closesDescriptor: true) { source in
                probe.touch()
                var byte: UInt8 = 0
                _ = read(source.fileDescriptor ?? -1, &byte, 1)
                lines.append("first \(byte)")
                source.invalidate()
            }
            guard let source else { check(false, "no source on a pipe"); return }
            numbers.value.append(first.read)
            loop.add(source, forMode: .default)
        }
        _ = write(first.write, [UInt8(1)], 1)
        close(first.write)
        _ = loop.run(mode: .default, for: .seconds(10))
        check(lines.lines == ["first 1", "deinit", "second 2"], "calls: \(lines.lines), not [first 1, deinit, second 2]")
        let used = numbers.value
        check(used.count == 2 && used[0] == used[1], "the second pipe did not reuse the first's number: \(used)")
    }

    static func pipePair() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { fatalError("pipe: errno \(errno)") }
        return (fds[0], fds[1])
    }

    /// A pipe whose read end has the number `number` if it is free. pipe(2) takes the lowest
    /// free numbers, and another thread of the process may have freed a lower one: each end
    /// is then moved to the lowest free number at or above (the write end past) `number`.
    static func pipePair(readEndAt number: Int32) -> (read: Int32, write: Int32) {
        var pair = pipePair()
        guard pair.read != number else { return pair }
        if pair.write == number {
            let moved = fcntl(pair.write, F_DUPFD_CLOEXEC, number + 1)
            close(pair.write)
            pair.write = moved
        }
        let moved = fcntl(pair.read, F_DUPFD_CLOEXEC, number)
        close(pair.read)
        pair.read = moved
        return pair
    }

    // MARK: Blocks and jobs

    static func blockDroppedDeinitStops(_ check: Check) {
        let loop = EVRunLoop.current
        let lines = Recorder()
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        do {
            let probe = DeinitProbe {
                lines.append("deinit")
                loop.perform { lines.append("performed") }
                loop.stop()
            }
            loop.perform { probe.touch(); lines.append("block") }
        }
        let result = loop.run(mode: .default, for: .seconds(20))
        check(result == .stopped, "the run returned \(result), not stopped")
        // CF's __CFRunLoopDoBlocks runs at several points of a pass: a block performed at
        // one runs at the next, in the same pass, before the stop ends the run.
        check(lines.lines == ["block", "deinit", "performed"], "calls: \(lines.lines), not [block, deinit, performed]")
    }

    static func jobRunsLoopNested(_ check: Check) {
        let owner = LoopThread()
        let lines = Recorder()
        let done = DispatchSemaphore(value: 0)
        let loop = owner.loop
        Task(executorPreference: loop) {
            lines.append("job")
            Task(executorPreference: loop) {
                lines.append("second task")
                done.signal()
            }
            runNested(loop, lines)
            lines.append("job returns")
        }
        check(done.wait(timeout: .now() + 20) == .success, "the second task never ran: \(lines.lines)")
        check(lines.lines == ["job", "nested timer", "job returns", "second task"],
              "calls: \(lines.lines), not [job, nested timer, job returns, second task]")
        owner.stop()
    }

    /// A run of a private mode nested in a job (sync code called from a task).
    static func runNested(_ loop: EVRunLoop, _ lines: Recorder) {
        loop.add(EVTimer(interval: 0, repeats: false) { _ in lines.append("nested timer") }, forMode: "nested")
        loop.run(mode: "nested", for: .seconds(20))
    }

    // MARK: Threads

    static func inboxDuringNestedRun(_ check: Check) {
        let loop = EVRunLoop.current
        let count = 50
        let fired = Counter()
        loop.add(EVTimer(interval: 0, repeats: false) { _ in
            let adder = Thread {
                for _ in 0..<count {
                    loop.add(EVTimer(interval: 0, repeats: false) { _ in
                        fired.add()
                        if fired.value == count { loop.stop() }
                    }, forMode: .common)
                }
            }
            adder.start()
            _ = loop.run(mode: .default, for: .seconds(20))  // nested: its passes drain the adds
        }, forMode: .default)
        _ = loop.run(mode: .default, for: .seconds(20))
        check(fired.value == count, "\(fired.value) of \(count) timers added from another thread fired")
    }

    static func threadExitDeinits(_ check: Check) {
        let deinits = Counter()
        let thread = Thread {
            let loop = EVRunLoop.current
            let kept = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(kept, forMode: .default)
            let probe = DeinitProbe {
                deinits.add()
                loop.wakeUp()
                loop.perform { deinits.add(100) }  // dropped: the loop's thread is gone
                kept.invalidate()
            }
            loop.add(EVTimer(interval: 60, repeats: false) { _ in probe.touch() }, forMode: .default)
            loop.add(EVObserver(activities: .entry) { _, _ in probe.touch() }, forMode: "other")
            loop.add(EVSource { _ in probe.touch() }, forMode: .common)
            loop.reportStalls(over: .seconds(60)) { _ in probe.touch() }
            _ = loop.run(mode: .default, for: .zero)  // armedState, lastRunState, lastResolved set
        }
        thread.start()
        let deadline = DispatchTime.now() + 20
        while deinits.value == 0, DispatchTime.now() < deadline { usleep(1_000) }
        check(deinits.value == 1, "the objects dropped at the thread's exit ran \(deinits.value) deinit calls, not 1")
    }

    /// A controller that owns an observer and invalidates it in its deinit (on the loop's
    /// thread, as an observer's rules ask), held only by another observer's callout in a
    /// mode that only the loop's mode table holds: the thread's exit lets it go.
    static func threadExitObserverInvalidated(_ check: Check) {
        let invalidations = Counter()
        onJoinedThread {
            let loop = EVRunLoop.current
            let owned = EVObserver(activities: .entry) { _, _ in }
            loop.add(owned, forMode: "a")
            let owner = ObserverOwner(owned, invalidations: invalidations)
            loop.add(EVObserver(activities: .entry) { _, _ in _ = owner }, forMode: "b")
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: "c")  // the last mode resolved
        }
        check(invalidations.value == 1, "the thread's exit invalidated the owned observer \(invalidations.value) times, not once")
    }
}

/// A user's controller: owns an observer and invalidates it when it goes.
final class ObserverOwner {
    let observer: EVObserver
    let invalidations: Counter
    init(_ observer: EVObserver, invalidations: Counter) {
        self.observer = observer
        self.invalidations = invalidations
    }
    deinit {
        observer.invalidate()
        if !observer.isValid { invalidations.add() }
    }
}
