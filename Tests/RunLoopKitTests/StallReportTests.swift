import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// Stall reports (issue 28): a callout past the threshold is reported while it runs, from
/// the watchdog thread, and when it returns; shorter ones are not.
@Suite("Real time: stall reports", .timeLimit(.minutes(10)))
struct StallReportTests {
    @Test("a callout blocked past the threshold is reported while it runs, then when it returns")
    func blockedCallout() {
        let reports = Mutex<[EVRunLoop.Stall]>([])
        let reportedWhileRunning = DispatchSemaphore(value: 0)
        let (gotEarlyReport, final) = onFreshThread { () -> (Bool, [EVRunLoop.Stall]) in
            let loop = EVRunLoop.current
            loop.reportStalls(over: .milliseconds(50)) { stall in
                reports.withLock { $0.append(stall) }
                if !stall.isFinished { reportedWhileRunning.signal() }
            }
            let early = LoopBox(false)
            loop.add(EVTimer(interval: .milliseconds(1), repeats: false, label: "quick") { _ in }, forMode: .default)
            loop.add(EVTimer(interval: .milliseconds(20), repeats: false, label: "stuck") { _ in
                // Blocks until the watchdog reported it: a callout that would never return.
                early.value = reportedWhileRunning.wait(timeout: .now() + 10) == .success
            }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(200))
            loop.stopReportingStalls()
            return (early.value, reports.withLock { $0 })
        }
        #expect(gotEarlyReport)
        #expect(final.count == 2)
        #expect(final.first.map { $0.kind == .timer && $0.label == "stuck" && !$0.isFinished && $0.duration > .milliseconds(50) } == true)
        #expect(final.last.map { $0.kind == .timer && $0.label == "stuck" && $0.isFinished && $0.duration > .milliseconds(50) } == true)
    }

    @Test("a callout that ran a nested run is watched again once the nested callout returns (issue 35, item 9)")
    func outerCalloutAfterNestedRun() {
        let reports = Mutex<[EVRunLoop.Stall]>([])
        let outerReported = DispatchSemaphore(value: 0)
        let (gotEarlyReport, final) = onFreshThread { () -> (Bool, [EVRunLoop.Stall]) in
            let loop = EVRunLoop.current
            loop.reportStalls(over: .milliseconds(100)) { stall in
                reports.withLock { $0.append(stall) }
                if stall.label == "outer" && !stall.isFinished { outerReported.signal() }
            }
            let early = LoopBox(false)
            let innerRan = LoopBox(false)
            let nestedMode = EVSource(label: "nested mode") { _ in }
            loop.add(nestedMode, forMode: "nested")
            loop.add(EVTimer(interval: .milliseconds(1), repeats: false, label: "outer") { _ in
                // A short nested run with a callout of its own, then a block: a deadlock,
                // unless the watchdog reports this callout.
                loop.perform(inModes: ["nested"], label: "inner") { innerRan.value = true }
                loop.run(mode: "nested", for: .zero)
                early.value = outerReported.wait(timeout: .now() + 10) == .success
            }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(200))
            loop.stopReportingStalls()
            nestedMode.invalidate()
            return (early.value && innerRan.value, reports.withLock { $0 })
        }
        #expect(gotEarlyReport, "the outer callout was not reported while it ran (after its nested callout)")
        #expect(final.map(\.label) == ["outer", "outer"])
        #expect(final.map(\.isFinished) == [false, true])
        #expect(final.allSatisfy { $0.kind == .timer && $0.duration > .milliseconds(100) })
    }

    @Test("an outer callout reported before its nested callout ran is not reported again while it runs")
    func outerReportedOnce() {
        let reports = Mutex<[EVRunLoop.Stall]>([])
        let reported = DispatchSemaphore(value: 0)
        let final = onFreshThread { () -> [EVRunLoop.Stall] in
            let loop = EVRunLoop.current
            loop.reportStalls(over: .milliseconds(50)) { stall in
                reports.withLock { $0.append(stall) }
                if !stall.isFinished { reported.signal() }
            }
            let nestedMode = EVSource(label: "nested mode") { _ in }
            loop.add(nestedMode, forMode: "nested")
            loop.add(EVTimer(interval: .milliseconds(1), repeats: false, label: "outer") { _ in
                _ = reported.wait(timeout: .now() + 10)  // reported while it runs
                loop.perform(inModes: ["nested"], label: "inner") {}
                loop.run(mode: "nested", for: .zero)
                // Still running, past the threshold again: the watchdog has reported it already.
                _ = reported.wait(timeout: .now() + .milliseconds(300))
            }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(200))
            loop.stopReportingStalls()
            nestedMode.invalidate()
            return reports.withLock { $0 }
        }
        #expect(final.map(\.label) == ["outer", "outer"])
        #expect(final.map(\.isFinished) == [false, true])
    }

    @Test("no report once stopped; a zero threshold stops with a message")
    func stopAndBadThreshold() async {
        let count = onFreshThread { () -> Int in
            let loop = EVRunLoop.current
            let reports = Mutex(0)
            loop.reportStalls(over: .milliseconds(10)) { _ in reports.withLock { $0 += 1 } }
            loop.stopReportingStalls()
            loop.perform(label: "slow") { usleep(50_000) }
            _ = loop.run(mode: .default, for: .zero)
            return reports.withLock { $0 }
        }
        #expect(count == 0)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            currentLoopOfThisThread().reportStalls(over: .zero) { _ in }
        }
        #expect(standardError(result).contains("EVRunLoop.reportStalls(over:_:): threshold 0.0 seconds must be greater than zero"))
    }
}
