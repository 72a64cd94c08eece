internal import CRunLoopKitLibev
@testable import RunLoopKit
@testable import RunLoopKitBackend
import Glibc

/// Checks a ``CycleClock``'s answers against real clock readings, as its callers use it: an
/// anchor read now and then, questions at the counter in between. Counts every answer the
/// clock contradicts, by claim. The unit tests run it briefly; the soak (`make clock-soak`)
/// for minutes, idle and under load.
struct CycleClockAudit {
    let rate: CycleRate
    private var clock: CycleClock
    private var generator = SplitMix(seed: 0x5EED)
    /// Answers checked that had bounds.
    private(set) var bounded = 0
    /// Contradicted answers, by claim.
    private(set) var violations: [String: Int] = [:]
    /// How far the widest bounds went past their promised width (ns; ≤ 0 when none did).
    private(set) var loosestBounds: Int64 = .min
    /// How far the latest upper bound went past the clock plus the slack (ns; ≤ 0 when none did).
    private(set) var latestUpperBound: Int64 = .min

    /// The slack asked of ``CycleClock/upperBound(lateBy:)``: an add's 4 µs.
    static let slack: Int64 = 4_000

    init(rate: CycleRate) {
        self.rate = rate
        clock = CycleClock(rate: rate)
    }

    /// Asks `rounds` questions; with `pauses`, sleeps now and then (up to 2 ms) so that the
    /// bounds extrapolate further, as a loop's do between its clock reads.
    mutating func run(rounds: Int, pauses: Bool = false) {
        var anchor = clock.read()
        for round in 0..<rounds {
            if round % 100 == 0 { anchor = clock.read() }  // a loop reads the clock now and then
            if pauses, generator.next() % 16 == 0 { usleep(UInt32(generator.next() % 2_000)) }
            check(anchor: &anchor)
        }
    }

    private mutating func check(anchor: inout Int64) {
        // The clock reads between `before` and `after` at each question.
        let before = clibev_monotonic_ns()
        let ticks = CycleClock.ticks()
        let bounds = clock.bounds(at: ticks)
        let isBeforeNow = clock.isBefore(before, at: ticks)
        let upper = clock.upperBound(lateBy: Self.slack)
        let after = clibev_monotonic_ns()
        if isBeforeNow { count("isBefore answered yes for an instant already read") }
        if let (earliest, latest) = bounds {
            bounded += 1
            if earliest > after { count("bounds' earliest after the clock") }
            if latest < before { count("bounds' latest before the clock") }
            if !clock.isBefore(latest + 1, at: ticks) { count("isBefore disagrees with bounds") }
            // 2 µs each side, the anchor's read (under 2 µs), 1/256 of the elapsed time each side.
            loosestBounds = max(loosestBounds, latest - earliest - (6_000 + (after - anchor) / 100))
        }
        if let upper {
            if upper < before { count("upperBound before the clock") }
            if upper > after + Self.slack { count("upperBound later than the slack") }
            latestUpperBound = max(latestUpperBound, upper - after - Self.slack)
        } else {
            anchor = clock.read()  // too old an anchor (or no rate): read, as the backend does
        }
    }

    private mutating func count(_ claim: String) { violations[claim, default: 0] += 1 }
}
