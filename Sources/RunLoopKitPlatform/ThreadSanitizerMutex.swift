#if RUNLOOPKIT_TSAN_PTHREAD_MUTEX
import Glibc

/// `Synchronization.Mutex`'s interface on a pthread mutex, built only for `make sanitizers`'
/// ThreadSanitizer run (`-DRUNLOOPKIT_TSAN_PTHREAD_MUTEX`), where it stands in for the futex
/// one (FutexMutex.swift) as every module's `Mutex`. Its word holds no stale thread id either:
/// glibc's `fork()` gives the child's thread its own.
///
/// ThreadSanitizer on Linux does not see `Synchronization.Mutex` hand the lock over: under
/// contention it is a priority-inheritance futex, and the kernel gives the lock to the waiter
/// with no user-space atomic for ThreadSanitizer to order the two critical sections by. It
/// then reports the guarded state (the inbox, the cycle rate) as raced. A pthread mutex it
/// intercepts, so with this one the run reports only real races, also on that state, and
/// needs no suppression (scripts/sanitizers says what was measured). Not a public API; no
/// CF / libev / GLib counterpart.
package final class Mutex<Value: ~Copyable>: @unchecked Sendable {
    // Sendable by its lock: `value` is touched only between pthread_mutex_lock and
    // pthread_mutex_unlock of `lock`, as Synchronization.Mutex guards its value.
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    /// A mutex guarding `initialValue`.
    package init(_ initialValue: consuming sending Value) {
        value = initialValue
        pthread_mutex_init(lock, nil)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    package func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }

    /// Runs `body` with the value if the lock is free now, taking it; nil without running it
    /// if another thread holds it.
    package func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(lock) == 0 else { return nil }
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}
#endif
