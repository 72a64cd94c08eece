internal import CLibev

/// Bounds the monotonic clock from above without reading it: from the CPU's counter
/// (`rdtsc`, 9 ns here, against 21 ns for `clock_gettime`), where the kernel computes its
/// monotonic clock from that counter.
///
/// Two callers need no more than a bound:
/// - A repeating timer's next date is CF's "first `scheduled + k * interval` after now", now
///   read after the callout; almost always that is `scheduled + interval`, and proving it
///   only needs an upper bound of now (``isBefore(_:)``).
/// - The start of a timer's interval may be a little late, never early
///   (``upperBound(lateBy:)``).
///
/// The bound extrapolates the last clock reading (the anchor) by the counter's ticks since,
/// at the process's measured rate (``CycleRate``, which includes a margin of 1/256), and adds
/// 2 µs (the counter's read may run a few hundred instructions early, and the anchor's two
/// reads are not simultaneous). With no usable counter, no rate yet, a counter behind its
/// anchor, or an anchor over a second old, there is no bound and the caller reads the clock.
///
/// Used on the loop's thread only (a value inside ``LibevBackend``).
struct CycleClock {
    /// Whether the kernel's monotonic clock counts the CPU's counter (read once).
    private static let isUsable = clibev_ticks_drive_monotonic() != 0

    private let rate: CycleRate
    private var anchorNanos: Int64 = 0
    private var anchorTicks: UInt64 = 0
    /// The rate's bounding value when the anchor was taken; 0 for none.
    private var boundingRate = 0.0

    private static let longestExtrapolation = 1e9
    /// What the bound adds to the extrapolation (ns).
    private static let margin = 2_000.0

    /// A clock whose bounds use `rate` (the process's, but for tests).
    init(rate: CycleRate = .shared) { self.rate = rate }

    /// Reads the monotonic clock, and keeps the reading as the anchor of later bounds. The
    /// counter is read first, so that a delay between the two reads (a preemption) makes
    /// later bounds later, never earlier.
    mutating func read() -> Int64 {
        guard Self.isUsable else { return clibev_monotonic_ns() }
        let ticks = clibev_ticks()
        let nanos = clibev_monotonic_ns()
        (anchorNanos, anchorTicks) = (nanos, ticks)
        rate.observe(nanos: nanos, ticks: ticks)
        boundingRate = rate.boundingRate
        return nanos
    }

    /// The clock's greatest possible advance since the anchor (ns); `.infinity` when there is
    /// no bound. (A counter behind its anchor wraps to a huge number of ticks.)
    @inline(__always)
    private var extrapolation: Double {
        guard boundingRate > 0 else { return .infinity }
        let elapsed = Double(clibev_ticks() &- anchorTicks) * boundingRate
        return elapsed < Self.longestExtrapolation ? elapsed : .infinity
    }

    /// Whether the monotonic clock certainly reads before `instant` now; false when unsure.
    @inline(__always)
    func isBefore(_ instant: Int64) -> Bool {
        extrapolation + Self.margin < Double(instant &- anchorNanos)
    }

    /// An instant at or after the monotonic clock's reading now and at most `slack` ns after
    /// it; nil when the bound could be later than that (or there is none).
    ///
    /// The bound exceeds the clock by the margin plus what the rate's 1/256 (and its
    /// measurement's 1/4096, and NTP's slew) add over the extrapolation: less than
    /// `margin + extrapolation / 200`.
    @inline(__always)
    func upperBound(lateBy slack: Int64) -> Int64? {
        let extrapolation = extrapolation
        guard Self.margin + extrapolation / 200 <= Double(slack) else { return nil }
        return anchorNanos &+ Int64(extrapolation + Self.margin)
    }
}
