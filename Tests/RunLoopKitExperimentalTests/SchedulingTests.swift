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
    @Test("Task.sleep in a task preferring a loop is a coalescing timer of the loop")
    func sleepCoalesces() {
        let result = Mutex<(wakes: [String], trace: [String])?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let loop = EVRunLoop(clock: EVVirtualClock())
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            loop.add(EVSource { _ in }, forMode: .default)  // keeps the mode alive until stop()
            let wakes = Lines()
            let start = loop.now
            for (name, delay, tolerance) in [("a", 20, 100), ("b", 60, 0)] {
                Task(executorPreference: loop) {
                    try await Task.sleep(for: .milliseconds(delay), tolerance: .milliseconds(tolerance))
                    let elapsed = (loop.now - start).components.attoseconds / 1_000_000_000_000_000
                    if wakes.append("\(name) \(elapsed) \(loop.isIsolatingCurrentContext()!)") == 2 {
                        loop.stop()
                    }
                }
            }
            loop.run()
            result.withLock { $0 = (wakes.all, trace.lines) }
            done.signal()
        }
        done.wait()
        let (wakes, trace) = result.withLock { $0! }
        // a (20 ms, tolerance 100 ms) waits for b (60 ms): one wake of the virtual clock serves
        // both. (Task.sleep gives an instant of the real clock, read a little after the virtual
        // one started: the wake is up to a few ms before 60 ms.)
        let fields = wakes.map { $0.split(separator: " ") }
        #expect(Set(fields.map { $0[0] }) == ["a", "b"])
        #expect(fields.allSatisfy { $0[2] == "true" }, "resumed on the loop's thread")
        let milliseconds = Set(fields.map { Int($0[1])! })
        #expect(milliseconds.count == 1 && (50...60).contains(milliseconds.first!), "\(wakes)")
        let fired = trace.indices.filter { trace[$0] == "timer(Task.sleep)" }
        #expect(fired.count == 2)
        #expect(fired.last == fired.first.map { $0 + 1 })
    }
}
#endif
