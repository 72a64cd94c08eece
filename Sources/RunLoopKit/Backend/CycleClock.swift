internal import CLibev

/// Tells, without reading the monotonic clock, that it has not reached an instant yet: from
/// the CPU's counter (`rdtsc`, 9 ns here, against 21 ns for `clock_gettime`), where the
/// kernel computes its monotonic clock from that counter.
///
/// A repeating timer's next date is CF's "first `scheduled + k * interval` after now", now
/// read after the callout; almost always that is `scheduled + interval`, and proving it
/// only needs an upper bound of now. The bound extrapolates the last clock reading (the
/// anchor) by the counter's ticks since, at a rate measured between readings at least
/// 10 ms apart, and adds a margin of 2 µs plus 1/256 of the time extrapolated (the
/// counter's read may run a few hundred instructions early; NTP slews the clock by at most
/// 500 ppm; two rates must agree within 1/4096 before either is used). With no usable
/// counter, no rate yet, a counter behind its anchor, or an anchor over a second old, there
/// is no bound and the caller reads the clock.
///
/// Used on the loop's thread only (a value inside ``LibevBackend``).
struct CycleClock {
    /// Whether the kernel's monotonic clock counts the CPU's counter (read once).
    private static let isUsable = clibev_ticks_drive_monotonic() != 0

    private var anchorNanos: Int64 = 0
    private var anchorTicks: UInt64 = 0
    /// The start of the rate's measurement.
    private var baseNanos: Int64 = 0
    private var baseTicks: UInt64 = 0
    /// The last rate measured (ns per tick), and the rate in use with the margin's 1/256
    /// added (0: none yet, or the last two rates disagreed).
    private var lastRate = 0.0
    private var boundingRate = 0.0

    private static let calibrationSpan: Int64 = 10_000_000
    private static let longestExtrapolation = 1e9

    /// Reads the monotonic clock, and keeps the reading as the anchor of later bounds. The
    /// counter is read first, so that a delay between the two reads (a preemption) makes
    /// later bounds later, never earlier.
    mutating func read() -> Int64 {
        guard Self.isUsable else { return clibev_monotonic_ns() }
        let ticks = clibev_ticks()
        let nanos = clibev_monotonic_ns()
        anchor(nanos: nanos, ticks: ticks)
        return nanos
    }

    private mutating func anchor(nanos: Int64, ticks: UInt64) {
        (anchorNanos, anchorTicks) = (nanos, ticks)
        guard baseTicks != 0 else {
            (baseNanos, baseTicks) = (nanos, ticks)
            return
        }
        let span = nanos - baseNanos
        guard span >= Self.calibrationSpan else { return }
        guard ticks > baseTicks else {  // the counter went back: start over
            (baseNanos, baseTicks, lastRate, boundingRate) = (nanos, ticks, 0, 0)
            return
        }
        let rate = Double(span) / Double(ticks - baseTicks)
        boundingRate = abs(rate - lastRate) <= lastRate / 4096 ? rate * (1 + 1.0 / 256) : 0
        lastRate = rate
        (baseNanos, baseTicks) = (nanos, ticks)
    }

    /// Whether the monotonic clock certainly reads before `instant` now; false when unsure.
    /// (A counter behind its anchor wraps to a huge elapsed time, past the longest.)
    @inline(__always)
    func isBefore(_ instant: Int64) -> Bool {
        guard boundingRate > 0 else { return false }
        let elapsed = Double(clibev_ticks() &- anchorTicks) * boundingRate
        return elapsed < Self.longestExtrapolation && elapsed + 2_000 < Double(instant &- anchorNanos)
    }
}
