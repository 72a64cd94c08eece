import RunLoopKit

/// How late timer callouts ran against their schedule `first + k * interval`.
final class LatenessRecorder {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.
    private(set) var fires = 0
    private(set) var earliest = 0.0
    private(set) var latest = 0.0

    /// Records a callout at `now` of a timer scheduled at `first + k * interval`, measured
    /// from the nearest scheduled time (so an early callout shows as negative). The fire
    /// dates were given as `Date`s, which the loop converts to its clock with sub-microsecond
    /// rounding; the report rounds to the microsecond.
    func record(now: EVRunLoop.Instant, first: EVRunLoop.Instant, interval: Duration) {
        let sinceFirst = now - first
        let nearest = (sinceFirst / interval).rounded()
        let late = seconds(sinceFirst) - nearest * seconds(interval)
        earliest = fires == 0 ? late : min(earliest, late)
        latest = fires == 0 ? late : max(latest, late)
        fires += 1
    }
}
