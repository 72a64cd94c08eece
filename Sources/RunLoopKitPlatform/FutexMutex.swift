#if !RUNLOOPKIT_TSAN_PTHREAD_MUTEX
internal import CRunLoopKitLibev
import Synchronization

/// `Synchronization.Mutex`'s interface on a lock word that holds no thread id, so that the
/// threads of a forked child can use it: every lock of RunLoopKit's modules (each module's
/// `Mutex` names this one).
///
/// `Synchronization.Mutex` on Linux is a priority-inheritance futex whose word holds the
/// owner's thread id, taken from a thread-local cache that `fork()` does not reset: in a
/// child, the forking thread writes its parent's id, and a thread made in the child that
/// contends traps. This word is 0 (free), 1 (held) or 2 (held, maybe with waiters): taking it
/// is one compare-and-swap, letting go one exchange, and a waiter sleeps in a private futex
/// (Drepper, "Futexes Are Tricky", mutex 3). A copy held at a `fork()` by a thread of the
/// parent stays held in the child (`withLockIfAvailable` answers nil; `withLock` waits for
/// good), which `ForkCheckedLock` turns into a message. Not fair, no priority inheritance.
/// Under `make sanitizers`' ThreadSanitizer run (`-DRUNLOOPKIT_TSAN_PTHREAD_MUTEX`) the
/// pthread one stands in its place (ThreadSanitizerMutex.swift). Not a public API; GLib's
/// `GMutex` is the same lock on Linux (a futex word of 0, 1, 2); CF uses `pthread_mutex_t`.
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the modules above (ARCHITECTURE.md, "Layers"), and each lock is a generic call.
@usableFromInline package final class Mutex<Value: ~Copyable>: @unchecked Sendable {
    // Sendable by its lock: `value` is touched only between taking `word` (0 to 1 or 2,
    // acquiring) and letting it go (to 0, releasing), as Synchronization.Mutex guards its value.
    /// 0 free, 1 held, 2 held and maybe waited for. At a fixed address (the object's), which
    /// the futex calls name.
    @usableFromInline let word = Atomic<UInt32>(0)
    /// The guarded value. Its exclusivity is the lock's, not checked again at run time.
    @usableFromInline @exclusivity(unchecked) var value: Value

    /// A mutex guarding `initialValue`.
    @inlinable
    package init(_ initialValue: consuming sending Value) {
        value = initialValue
    }

    /// Runs `body` with the value while holding the lock, waiting for it when another thread
    /// holds it.
    @inlinable @inline(__always)
    package func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        if !word.compareExchange(expected: 0, desired: 1, successOrdering: .acquiring, failureOrdering: .relaxed).exchanged {
            waitForLock()
        }
        defer { unlock() }
        return try body(&value)
    }

    /// Runs `body` with the value if the lock is free now, taking it; nil without running it
    /// if another thread holds it.
    @inlinable @inline(__always)
    package func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard word.compareExchange(expected: 0, desired: 1, successOrdering: .acquiring, failureOrdering: .relaxed).exchanged
        else { return nil }
        defer { unlock() }
        return try body(&value)
    }

    /// Lets the lock go, waking a waiter if there may be one.
    @inlinable @inline(__always)
    func unlock() {
        if word.exchange(0, ordering: .releasing) == 2 { wakeWaiter() }
    }

    /// Takes the lock when another thread held it at the first try: marks it waited for and
    /// sleeps until it is let go, each time it was not free.
    @usableFromInline @inline(never)
    func waitForLock() {
        withUnsafePointer(to: word) { atomic in
            // A noncopyable value is borrowed in place: `atomic` is the word's own address.
            let address = UnsafeMutableRawPointer(mutating: atomic).assumingMemoryBound(to: UInt32.self)
            while word.exchange(2, ordering: .acquiring) != 0 { clibev_futex_wait(address, 2) }
        }
    }

    /// Wakes one thread waiting for the lock.
    @usableFromInline @inline(never)
    func wakeWaiter() {
        withUnsafePointer(to: word) { atomic in
            clibev_futex_wake(UnsafeMutableRawPointer(mutating: atomic).assumingMemoryBound(to: UInt32.self))
        }
    }
}
#endif
