import Foundation

/// Runs `body` as a task and blocks the calling (non-pool) thread until it returns: how the
/// synchronous driver runs the peers that live in Swift concurrency.
func blockingAwait<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) -> Result {
    let handoff = Handoff<Result>()
    Task.detached { handoff.deliver(await body()) }
    return handoff.wait()
}

/// Sleeps the calling thread (not a task) for `seconds`.
func sleepThread(_ seconds: Double) {
    Thread.sleep(forTimeInterval: seconds)
}

extension Duration {
    /// A duration of `seconds` (a `Double`), to the nanosecond.
    static func seconds(double seconds: Double) -> Duration { .nanoseconds(Int64((seconds * 1e9).rounded())) }
}
