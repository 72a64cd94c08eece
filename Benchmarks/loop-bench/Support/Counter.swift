import Synchronization

/// A counter bumped by callouts on one loop thread.
final class Counter: @unchecked Sendable {
    // Safe: incremented only by callouts of one loop on its own thread (or of one serial
    // queue); read on that thread or after the work handed its result back.
    var value = 0
}

/// A counter bumped from any thread (tasks of the concurrency pool run in parallel).
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    /// Adds one.
    @inline(__always)
    func increment() { storage.add(1, ordering: .relaxed) }

    /// The count so far.
    var value: Int { storage.load(ordering: .relaxed) }
}
