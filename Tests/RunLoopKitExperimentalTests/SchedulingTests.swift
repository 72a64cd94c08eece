#if compiler(>=6.3)
import Foundation
@_spi(Experimental) import RunLoopKitExperimental
import RunLoopKit
import Synchronization
import Testing

/// Lines appended from tasks.
final class Lines: Sendable {
    private let storage = Mutex<[String]>([])

    /// Appends `line`; returns how many lines there are now.
    @discardableResult
    func append(_ line: String) -> Int { storage.withLock { $0.append(line); return $0.count } }

    var all: [String] { storage.withLock { $0 } }
}

@Suite("Experimental executors")
struct SchedulingTests {
    /// `duration` in whole microseconds, rounded down.
    static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }

    @Test("Task.sleep in a task preferring a loop is a coalescing timer of the loop")
    func sleepCoalesces() async {
        // Awaited, never waited for on a thread of the pool: the tasks need the pool to reach
        // the loop, and two tests blocking the pool's two threads (a 2-core machine) hung a
        // whole run of the suite.
        let (wakes, trace) = await withCheckedContinuation { (done: CheckedContinuation<([String], [String]), Never>) in
            Thread.detachNewThread {
                let loop = EVRunLoop(clock: EVVirtualClock())
                let trace = EVRunLoop.Trace()
                loop.trace = trace
                loop.add(EVSource { _ in }, forMode: .default)  // keeps the mode alive until stop()
                let wakes = Lines()
                let start = loop.now
                for (name, delay, tolerance) in [("a", 20, 100), ("b", 60, 0)] {
                    Task(executorPreference: loop) {
                        let sleeping = ContinuousClock.now
                        try await Task.sleep(for: .milliseconds(delay), tolerance: .milliseconds(tolerance))
                        let real = Self.microseconds(ContinuousClock.now - sleeping)
                        let line = "\(name) \(Self.microseconds(loop.now - start)) \(real) \(loop.isIsolatingCurrentContext()!)"
                        if wakes.append(line) == 2 { loop.stop() }
                    }
                }
                loop.run()
                done.resume(returning: (wakes.all, trace.lines))
            }
        }
        // a (20 ms, tolerance 100 ms) waits for b (60 ms): one wake of the virtual clock serves
        // both. Task.sleep gives the executor an instant of the real clock, which it turns back
        // into a delay by reading that clock again: the delay is short by the real time between
        // the two reads, which is within the real time the task measured around its sleep (the
        // virtual clock does not wait). So b's wake is at 60 ms less at most that (µs, rounded down).
        let fields = wakes.map { $0.split(separator: " ") }
        #expect(Set(fields.map { $0[0] }) == ["a", "b"])
        #expect(fields.allSatisfy { $0[3] == "true" }, "resumed on the loop's thread")
        let wakesAt = Set(fields.map { Int64($0[1])! })
        #expect(wakesAt.count == 1, "one wake serves both: \(wakes)")
        if let b = fields.first(where: { $0[0] == "b" }) {
            let (wake, real) = (Int64(b[1])!, Int64(b[2])!)
            #expect(wake <= 60_000 && wake + 1 >= 60_000 - real, "\(wakes)")
        }
        let fired = trace.indices.filter { trace[$0] == "timer(Task.sleep)" }
        #expect(fired.count == 2)
        #expect(fired.last == fired.first.map { $0 + 1 })
    }
}
#endif
