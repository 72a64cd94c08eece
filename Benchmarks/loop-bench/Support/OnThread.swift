import Foundation
import Synchronization

/// Runs `body` on a new thread and waits for its result.
///
/// Every measurement runs on a fresh thread, so each gets a fresh `EVRunLoop` (a loop
/// belongs to the thread that first touches `EVRunLoop.current`), a fresh `CFRunLoop`,
/// and per-thread counters (`getrusage(RUSAGE_THREAD)`) that see only its own work.
func onFreshThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
    let handoff = Handoff<Result>()
    let thread = Thread { handoff.deliver(body()) }
    thread.stackSize = 8 << 20
    thread.start()
    return handoff.wait()
}

/// One value handed from one thread (or task) to another that blocks until it arrives.
final class Handoff<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Hands `value` over; call once.
    func deliver(_ value: Value) {
        self.value.withLock { $0 = value }
        done.signal()
    }

    /// Blocks until ``deliver(_:)`` was called and returns its value.
    func wait() -> Value {
        done.wait()
        return value.withLock { $0! }
    }
}
