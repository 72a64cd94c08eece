/// What one wait of the loop asks of the backend: made by the core (the pass plans it from
/// its timer queue and the run's deadline), read by ``Backend/wait(_:events:)``. A plain
/// value: the backends depend on it, it depends on no backend.
///
/// CFRunLoop's counterpart is the timeout `__CFRunLoopRun` passes to its wait; libev's, the
/// timeout `ev_run` computes from its timers.
package enum Wait {
    /// Collect readiness and consume a pending wake, without sleeping.
    case poll
    /// Sleep until a moment of the window, a wake, or readiness.
    case until(WakeWindow)
    /// Sleep until a wake or readiness: no timer and no run deadline.
    case forever

    /// The latest the wait may end, in nanoseconds: `.min` for a poll, `.max` for none.
    @inlinable package var latestNanoseconds: Int64 {
        switch self {
        case .poll: .min
        case .until(let window): window.latest
        case .forever: .max
        }
    }
}

/// When a wait should end, as the timer queue sees it, in nanoseconds on the loop's
/// monotonic clock.
///
/// Waking at ``served`` fires the same timers as waking at ``latest``, sooner; waking
/// between ``first`` and ``served`` fires fewer of them (the rest wait for a later wake).
/// A backend whose wakes run late may wake early in the window, so that no timer fires
/// past its tolerance.
///
/// CFRunLoop's counterpart is a timer's fire date and its tolerance (`_fireTSR`,
/// `_tolerance`), which CF hands to the kernel; sd-event's is `sleep_between`'s window.
package struct WakeWindow {
    /// The earliest fire date of any timer: a wake before it serves nothing.
    package var first: Int64
    /// The latest fire date among the timers a wake at ``latest`` would fire.
    package var served: Int64
    /// The latest acceptable wake: the end of the earliest-ending tolerance, or the run's
    /// deadline; `Int64.max` when there is neither.
    package var latest: Int64
    /// Whether ``latest`` is a zero-tolerance timer's fire date, worth waking for exactly.
    package var precise: Bool

    /// A window from the timer heaps' keys (nanoseconds; `.max` where there is no timer).
    @inlinable
    package init(first: Int64, served: Int64, latest: Int64, precise: Bool) {
        (self.first, self.served, self.latest, self.precise) = (first, served, latest, precise)
    }

    /// A wait for exactly `nanos` (the run's deadline).
    @inlinable
    package static func at(_ nanos: Int64) -> WakeWindow {
        WakeWindow(first: nanos, served: nanos, latest: nanos, precise: false)
    }
}
