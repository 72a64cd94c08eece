import Synchronization

/// A counter bumped by callouts on the thread that made it (not `Sendable`: a `@Sendable`
/// callout reaches it through `EVRunLoop.isolated`, which checks the thread).
final class Counter {
    var value = 0
}

/// A counter bumped from any thread (tasks of the concurrency pool run in parallel).
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    /// Adds one.
    @inline(__always)
    func increment() { storage.add(1, ordering: .relaxed) }

    /// Adds one and returns the new count.
    @inline(__always)
    func incremented() -> Int { storage.add(1, ordering: .relaxed).newValue }

    /// The count so far.
    var value: Int { storage.load(ordering: .relaxed) }
}
