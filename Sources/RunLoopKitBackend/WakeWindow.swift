/// What one wait of the loop asks of the backend: made by the core (the pass plans it from
/// its timer queue and the run's deadline), read by ``Backend/wait(_:events:)``. A plain
/// value: the backends depend on it, it depends on no backend.
enum Wait {
    /// Collect readiness and consume a pending wake, without sleeping.
    case poll
    /// Sleep until a moment of the window, a wake, or readiness.
    case until(WakeWindow)
    /// Sleep until a wake or readiness: no timer and no run deadline.
    case forever

    /// The latest the wait may end, in nanoseconds: `.min` for a poll, `.max` for none.
    var latestNanoseconds: Int64 {
        switch self {
        case .poll: .min
        case .until(let window): window.latest.nanoseconds
        case .forever: .max
        }
    }
}

/// When a wait should end, as the timer queue sees it.
///
/// Waking at ``served`` fires the same timers as waking at ``latest``, sooner; waking
/// between ``first`` and ``served`` fires fewer of them (the rest wait for a later wake).
/// A backend whose wakes run late may wake early in the window, so that no timer fires
/// past its tolerance.
struct WakeWindow {
    /// The earliest fire date of any timer: a wake before it serves nothing.
    var first: EVRunLoop.Instant
    /// The latest fire date among the timers a wake at ``latest`` would fire.
    var served: EVRunLoop.Instant
    /// The latest acceptable wake: the end of the earliest-ending tolerance, or the run's
    /// deadline; ``EVRunLoop/Instant/distantFuture`` when there is neither.
    var latest: EVRunLoop.Instant
    /// Whether ``latest`` is a zero-tolerance timer's fire date, worth waking for exactly.
    var precise: Bool

    init(first: EVRunLoop.Instant, served: EVRunLoop.Instant, latest: EVRunLoop.Instant, precise: Bool) {
        (self.first, self.served, self.latest, self.precise) = (first, served, latest, precise)
    }

    /// A window from the timer heaps' keys (nanoseconds; `.max` where there is no timer).
    init(first: Int64, served: Int64, latest: Int64, precise: Bool) {
        self.init(first: .init(nanoseconds: first), served: .init(nanoseconds: served),
                  latest: .init(nanoseconds: latest), precise: precise)
    }

    /// A wait for exactly `instant` (the run's deadline).
    static func at(_ instant: EVRunLoop.Instant) -> WakeWindow {
        WakeWindow(first: instant, served: instant, latest: instant, precise: false)
    }
}
