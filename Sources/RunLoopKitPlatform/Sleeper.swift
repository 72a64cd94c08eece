import Glibc

/// A pthread condition variable: one thread sleeps until another wakes it (a virtual-clock
/// loop's wait for work from another thread).
///
/// The corresponding GLib type is `GCond` with its `GMutex`.
package final class Sleeper: @unchecked Sendable {
    // Safe: the mutex and condition are only touched through pthread calls, which
    // synchronise themselves; the pointers never change after init.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Sleeps until `done()` returns true (checked under the mutex, so no wake is lost).
    package func sleep(until done: () -> Bool) {
        pthread_mutex_lock(mutex)
        while !done() { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }

    package func wake() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
