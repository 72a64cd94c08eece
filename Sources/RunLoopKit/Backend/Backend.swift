#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the core asks of the thing that waits: clocks, a bounded wait, a wake from any
/// thread, and readiness of file descriptors and POSIX signals.
///
/// Two implementations: ``LibevBackend`` (the real loop) and ``VirtualBackend`` (a manual
/// clock for tests). The core never sees libev; only `LibevBackend.swift` imports it.
protocol Backend: AnyObject, Sendable {
    /// The monotonic clock.
    func now() -> EVRunLoop.Instant
    /// The wall clock.
    func wallNow() -> Date
    /// The wall clock in nanoseconds since 1970, exact (a `Date` keeps only ~0.2 µs).
    func wallNanos() -> Int64
    /// Waits until a moment in `window`, until a watched descriptor or signal is ready, or
    /// until ``wakeUp()`` is called (a wake sent before the wait ends it at once). A window
    /// at or before now polls: readiness is collected and a pending wake consumed, without
    /// sleeping. Readiness is
    /// reported to `events` from inside this call, on the loop's thread.
    func wait(in window: WakeWindow, events: any BackendEvents)
    /// The deadline (ns) that ended the last ``wait(in:events:)``: the instant it was set to
    /// end; nil when a wake or a ready watch ended it first, or it polled.
    var expiredDeadline: Int64? { get }
    /// Ends the current or next ``wait(in:events:)`` early. Safe from any thread.
    func wakeUp()
    /// Whether tolerant wakes go on the shared ``WakeGrid`` (``EVRunLoop/timerCoalescing``
    /// is `.sharedGrid`) rather than at the loop's own greedy instant. Loop thread only.
    var usesSharedGrid: Bool { get set }

    /// Whether this backend can watch descriptors and signals (the virtual one cannot).
    var watchesKernelEvents: Bool { get }
    /// Starts reporting readiness of `target` under `token` (a slot of the loop's
    /// ``WatchTable``, unused by any other watch). O(1).
    func watch(_ target: WatchTarget, token: Int)
    /// Changes what the descriptor watched under `token` waits for, without unwatching it. O(1).
    func setInterest(_ interest: EVSource.Readiness, token: Int)
    /// Stops reporting readiness for `token` (a signal's catching ends). O(1).
    func unwatch(_ token: Int)
}

/// What a backend watch waits for.
enum WatchTarget {
    /// A file descriptor becoming ready for `interest` (libev's `ev_io`).
    case descriptor(Int32, interest: EVSource.Readiness)
    /// A POSIX signal arriving (libev's `ev_signal`).
    case signal(Int32)
}

/// Where a backend reports what it saw during a wait.
protocol BackendEvents: AnyObject {
    /// The watch under `token` is ready: its descriptor can be read or written, or its
    /// signal arrived.
    func ready(_ token: Int)
    /// The wall clock was set (not slewed): wall-aligned deadlines must be recomputed.
    func wallClockChanged()
}

/// When a wait should end, as the timer queue sees it (all instants in nanoseconds).
///
/// Waking at ``served`` fires the same timers as waking at ``latest``, sooner; waking
/// between ``first`` and ``served`` fires fewer of them (the rest wait for a later wake).
/// A backend whose wakes run late may wake early in the window, so that no timer fires
/// past its tolerance.
struct WakeWindow {
    /// The earliest fire date of any timer: a wake before it serves nothing.
    var first: Int64
    /// The latest fire date among the timers a wake at ``latest`` would fire.
    var served: Int64
    /// The latest acceptable wake: the end of the earliest-ending tolerance, or the run's
    /// deadline.
    var latest: Int64
    /// Whether ``latest`` is a zero-tolerance timer's fire date, worth waking for exactly.
    var precise: Bool

    /// A wait for exactly `instant` (the run's deadline, or `.max` for none).
    static func at(_ instant: Int64) -> WakeWindow {
        WakeWindow(first: instant, served: instant, latest: instant, precise: false)
    }
}
