// Public: the `@inlinable` bodies below call the shim, and compile into the caller.
public import CRunLoopKitLibev
import Glibc

/// The kernel objects a libev backend sleeps on besides its epoll instance, the platform's
/// part: an eventfd (another thread's wake, a signal's arrival) and timerfds (a precise
/// deadline on `CLOCK_MONOTONIC`, the wall clock's jumps on `CLOCK_REALTIME`), all made
/// non-blocking and close-on-exec. Errors are left in ``SystemErrno/current``.
///
/// The corresponding libev watchers are `ev_async` (an eventfd) and `ev_timer` (libev's
/// own heap, to the millisecond of `epoll_wait`); sd-event keeps timerfds the same way.
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the module above (ARCHITECTURE.md, "Layers").
@usableFromInline package enum KernelWakes {
    /// A new eventfd, or -1.
    package static func makeEventDescriptor() -> Int32 { clibev_eventfd_create() }

    /// Adds one to the eventfd `fd` (async-signal-safe).
    @inlinable
    package static func increment(_ fd: Int32) { _ = clibev_eventfd_increment(fd) }

    /// Reads the eventfd `fd` back to zero: whether it had been incremented.
    @inlinable
    package static func consumeEvent(_ fd: Int32) -> Bool { clibev_eventfd_consume(fd) == 1 }

    /// A new timerfd on `CLOCK_REALTIME` (`realtime`) or `CLOCK_MONOTONIC`, or -1.
    package static func makeTimerDescriptor(realtime: Bool) -> Int32 { clibev_timerfd_create(realtime ? 1 : 0) }

    /// Arms the timerfd `fd` for the absolute instant `deadline` (ns on its clock; 0
    /// disarms it); `cancelOnSet` makes a jump of the wall clock end it (`ECANCELED`). False
    /// when it fails.
    @inlinable
    package static func arm(_ fd: Int32, at deadline: Int64, cancelOnSet: Bool = false) -> Bool {
        clibev_timerfd_arm(fd, deadline, cancelOnSet ? 1 : 0) == 0
    }

    /// Whether `code`, the errno of a failed ``arm(_:at:cancelOnSet:)`` with `cancelOnSet`,
    /// says that the wall clock was set meanwhile (`ECANCELED`).
    package static func isClockChange(_ code: Int32) -> Bool { code == ECANCELED }

    /// What reading the timerfd `fd` found.
    @usableFromInline package enum Expiry {
        /// It expired.
        case expired
        /// Nothing (it did not expire since the last read).
        case none
        /// The wall clock jumped (`ECANCELED` on a `cancelOnSet` timerfd).
        case clockChanged
    }

    /// Reads the timerfd `fd`.
    @inlinable
    package static func consumeTimer(_ fd: Int32) -> Expiry {
        switch clibev_timerfd_consume(fd) {
        case 1: .expired
        case -2: .clockChanged
        default: .none
        }
    }
}
