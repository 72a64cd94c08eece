#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RunLoopKitBackend

/// The backend layer speaks nanoseconds; the engine and the API speak ``EVRunLoop/Instant``
/// and `Date`. These read the backend's clocks as the engine's values (the same numbers),
/// inlined: out of line, each is a call on the idle pass's and the fire's paths
/// (`loop-bench --check`'s idle-pass and fire rows).
extension Backend {
    /// The monotonic clock.
    @inline(__always)
    func now() -> EVRunLoop.Instant { EVRunLoop.Instant(nanoseconds: monotonicNanos()) }

    /// The monotonic clock, or an instant after it by at most `slack` ns
    /// (``Backend/monotonicNanos(lateBy:)``).
    @inline(__always)
    func now(lateBy slack: Int64) -> EVRunLoop.Instant { EVRunLoop.Instant(nanoseconds: monotonicNanos(lateBy: slack)) }

    /// CF's next fire date of a repeating timer (``Backend/nextGridPoint(after:every:)``).
    @inline(__always)
    func nextGridPoint(after scheduled: EVRunLoop.Instant, every intervalNanos: Int64) -> EVRunLoop.Instant {
        EVRunLoop.Instant(nanoseconds: nextGridPoint(after: scheduled.nanoseconds, every: intervalNanos))
    }

    /// The deadline that ended the last wait (``Backend/expiredDeadlineNanos``).
    @inline(__always)
    var expiredDeadline: EVRunLoop.Instant? { expiredDeadlineNanos.map(EVRunLoop.Instant.init(nanoseconds:)) }

    /// The wall clock.
    func wallNow() -> Date { EVVirtualClock.date(nanoseconds: wallNanos()) }

    /// The loop-clock instant (ns) of wall-clock `date`, exact to the nanosecond the `Date`
    /// holds, saturating at `Int64`'s range.
    func nanos(at date: Date) -> Int64 {
        let ahead = date.nanosecondsSince1970.saturatingSubtract(wallNanos())
        return now().nanoseconds.saturatingAdd(ahead)
    }

    /// The wall-clock date of loop-clock instant `nanos`.
    func date(atNanos nanos: Int64) -> Date {
        EVVirtualClock.date(nanoseconds: wallNanos().saturatingAdd(nanos.saturatingSubtract(now().nanoseconds)))
    }
}

extension WatchInterest {
    /// The backend's interest for a descriptor source's readiness (the same bits).
    init(_ readiness: EVSource.Readiness) { self.init(rawValue: readiness.rawValue) }
}
