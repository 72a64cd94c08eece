/// When a run ends by time: CF's `seconds` argument to `CFRunLoopRunInMode`, typed.
///
/// CF turns a timeout at or below zero into one polling pass, a timeout beyond
/// `TIMER_INTERVAL_LIMIT` (about 16 years) into none at all, and anything between into a
/// deadline on its monotonic clock (`termTSR`).
enum RunDeadline {
    /// One pass that never sleeps.
    case poll
    /// Passes until the loop's monotonic clock reaches the instant.
    case at(EVRunLoop.Instant)
    /// No deadline.
    case never

    /// CF's `TIMER_INTERVAL_LIMIT`, in nanoseconds: longer timeouts mean "no deadline".
    static let intervalLimit: Int64 = 504_911_232 * 1_000_000_000

    /// The deadline `nanos` nanoseconds after `now`: a poll at or below zero, none beyond
    /// ``intervalLimit``.
    static func after(nanoseconds nanos: Int64, from now: EVRunLoop.Instant) -> RunDeadline {
        if nanos <= 0 { return .poll }
        if nanos > intervalLimit { return .never }
        return .at(now + .nanoseconds(nanos))
    }
}
