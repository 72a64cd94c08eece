import Foundation

/// Runs `body` on a new thread and waits for its result.
///
/// Every measurement runs on a fresh thread, so each gets a fresh `EVRunLoop` (a loop
/// belongs to the thread that first touches `EVRunLoop.current`), a fresh `CFRunLoop`,
/// and per-thread counters (`getrusage(RUSAGE_THREAD)`) that see only its own work.
func onFreshThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
    let handoff = Handoff<Result>()
    let thread = Thread {
        handoff.result = body()
        handoff.done.signal()
    }
    thread.stackSize = 8 << 20
    thread.start()
    handoff.done.wait()
    return handoff.result!
}

/// The result of a thread, handed to the waiting thread.
private final class Handoff<Result>: @unchecked Sendable {
    // Safe: `result` is written once by the worker before `done.signal()` and read by the
    // waiter only after `done.wait()`, which orders the two.
    var result: Result?
    let done = DispatchSemaphore(value: 0)
}
