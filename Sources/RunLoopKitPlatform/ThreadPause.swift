import Glibc

/// Pausing the calling thread, the platform's part: yielding the CPU, and sleeping.
///
/// The corresponding GLib calls are `g_thread_yield` and `g_usleep`.
package enum ThreadPause {
    /// Lets another thread run (`sched_yield`).
    package static func yield() { sched_yield() }

    /// Sleeps for `microseconds` (`usleep`; a signal may end it early).
    package static func sleep(microseconds: UInt32) { usleep(microseconds) }
}
