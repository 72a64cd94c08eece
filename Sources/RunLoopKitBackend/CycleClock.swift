internal import CRunLoopKitLibev
import RunLoopKitPlatform

/// Bounds the monotonic clock without reading it: from the CPU's counter (`rdtsc`, about
/// half the cost of `clock_gettime`: Benchmarks/PROFILING.md), where the kernel computes
/// its monotonic clock from that counter.
///
/// Two callers need no more than bounds:
/// - A repeating timer's next date is CF's "first `scheduled + k * interval` after now", now
///   read after the callout: `scheduled + interval` while the loop keeps up, which only
///   needs an upper bound of now (``isBefore(_:at:)``); a later grid point while it is
///   behind, which every reading within the bounds almost always gives (``bounds(at:)``).
/// - The start of a timer's interval may be a little late, never early
///   (``upperBound(lateBy:)``).
///
/// The bounds extrapolate the last clock reading (the anchor) by the counter's ticks since,
/// at the process's measured rate (``CycleRate``) give or take 1/256, and widen by 2 µs
/// (the counter's read may run a few hundred instructions early or late) and, below, by the
/// time the anchor's read took (the reading belongs somewhere in it). With no usable
/// counter, no rate yet, a counter behind its anchor, or an anchor over a second old, there
/// are no bounds and the caller reads the clock.
///
/// Used on the loop's thread only (a value inside ``LibevBackend``).
struct CycleClock {
    /// Whether the kernel's monotonic clock counts the CPU's counter, and the counter is
    /// invariant (read once: ``SystemClock/ticksDriveMonotonic()``).
    private static let isUsable: Bool = {
        #if DEBUG
        if let hook = ForkPreparation.firstUseHookForTests.withLock({ $0 }) { hook() }
        #endif
        return SystemClock.ticksDriveMonotonic()
    }()

    /// Makes the process's one-time state the clock reads: its usability and the rate
    /// (``ForkPreparation``).
    static func settle() {
        _ = isUsable
        _ = CycleRate.shared
    }

    private let rate: CycleRate
    private var anchorNanos: Int64 = 0
    private var anchorTicks: UInt64 = 0
    /// How long the anchor's clock read took (ns): the reading belongs somewhere in it.
    private var anchorSpread = 0.0
    /// The rate when the anchor was taken (ns per tick), plus and minus 1/256; 0 for none.
    private var latestNanosPerTick = 0.0
    private var earliestNanosPerTick = 0.0
    /// The rate when the anchor was taken as a fixed-point factor, ns per tick × 2^32, and
    /// the most ticks ``estimate(at:)`` extrapolates (a second's, below 2^32); 0 for none.
    private var nanosPerTickFixed: UInt64 = 0
    private var estimateTicks: UInt64 = 0
    /// For ``upperBound(lateBy:)``, in integers: the latest rate (+1/256) as ns per tick ×
    /// 2^32, rounded up (0 for none), and what the margin and the anchor's read take from a
    /// slack (ns, rounded up; a read of unknown length takes more than any slack).
    private var latestNanosPerTickFixed: UInt64 = 0
    private var slackTaken: Int64 = 1 << 40

    private static let longestExtrapolation = 1e9
    /// What the bounds add on each side (ns).
    private static let margin = 2_000.0

    /// A clock whose bounds use `rate` (the process's, but for tests).
    init(rate: CycleRate = .shared) { self.rate = rate }

    /// Reads the monotonic clock, and keeps the reading as the anchor of later bounds: the
    /// counter read just before it, and how long the read took.
    mutating func read() -> Int64 {
        guard Self.isUsable else { return SystemClock.monotonicNanoseconds() }
        let before = clibev_ticks()
        let nanos = SystemClock.monotonicNanoseconds()
        let after = clibev_ticks()
        rate.observe(nanos: nanos, ticks: before, spread: after &- before)
        anchor(nanos: nanos, ticksBefore: before, ticksAfter: after)
        return nanos
    }

    /// Makes `nanos`, a clock reading taken while the counter went from `ticksBefore` to
    /// `ticksAfter`, the anchor of later bounds, at the rate published now.
    mutating func anchor(nanos: Int64, ticksBefore before: UInt64, ticksAfter after: UInt64) {
        (anchorNanos, anchorTicks) = (nanos, before)
        let nanosPerTick = rate.nanosPerTick
        (latestNanosPerTick, earliestNanosPerTick) = (nanosPerTick * (1 + 1.0 / 256), nanosPerTick * (1 - 1.0 / 256))
        if nanosPerTick > 0 && nanosPerTick < 1_000 {
            nanosPerTickFixed = UInt64(nanosPerTick * 4_294_967_296)
            estimateTicks = UInt64(min(Self.longestExtrapolation / nanosPerTick, 4_294_967_295))
            latestNanosPerTickFixed = UInt64((latestNanosPerTick * 4_294_967_296).rounded(.up))
        } else {
            (nanosPerTickFixed, estimateTicks, latestNanosPerTickFixed) = (0, 0, 0)
        }
        anchorSpread = after >= before ? Double(after - before) * nanosPerTick : .infinity
        slackTaken = anchorSpread < 1e12 ? Int64(Self.margin + anchorSpread.rounded(.up)) : 1 << 40
    }

    /// The counter now, for the questions below: one reading can serve several.
    @inline(__always)
    static func ticks() -> UInt64 { clibev_ticks() }

    /// The most the clock can have advanced since the anchor when the counter read `ticks`
    /// (ns, before the margin); nil when there is no bound. (A counter behind its anchor
    /// wraps to a huge number of ticks.)
    @inline(__always)
    private func latestElapsed(at ticks: UInt64) -> Double? {
        guard latestNanosPerTick > 0 else { return nil }
        let elapsed = Double(ticks &- anchorTicks) * latestNanosPerTick
        return elapsed < Self.longestExtrapolation ? elapsed : nil
    }

    /// The monotonic clock when the counter read `ticks`, extrapolated from the anchor at
    /// the measured rate: for measurements (the loop's metrics), whose error is the clock's
    /// slew since the anchor (NTP's at most 500 ppm of at most a second); nil with no anchor
    /// under a second old (then read the clock).
    /// Integer arithmetic only: one full-width multiply and a shift.
    @inline(__always)
    func estimate(at ticks: UInt64) -> Int64? {
        let elapsed = ticks &- anchorTicks
        guard elapsed < estimateTicks else { return nil }
        let (high, low) = elapsed.multipliedFullWidth(by: nanosPerTickFixed)
        return anchorNanos &+ Int64(truncatingIfNeeded: (high &<< 32) | (low &>> 32))
    }

    /// Whether the monotonic clock certainly read before `instant` when the counter read
    /// `ticks`; false when unsure. The question of a loop that keeps up with its timers,
    /// asked per fire: the shortest path.
    @inline(__always)
    func isBefore(_ instant: Int64, at ticks: UInt64) -> Bool {
        guard let elapsed = latestElapsed(at: ticks) else { return false }
        return elapsed + Self.margin < Double(instant &- anchorNanos)
    }

    /// The earliest and the latest the monotonic clock can have read when the counter read
    /// `ticks`; nil when unsure (then read the clock).
    @inline(__always)
    func bounds(at ticks: UInt64) -> (earliest: Int64, latest: Int64)? {
        guard let latest = latestElapsed(at: ticks), anchorSpread < Self.margin else { return nil }
        let earliest = Double(ticks &- anchorTicks) * earliestNanosPerTick - Self.margin - anchorSpread
        return (anchorNanos &+ Int64(earliest), anchorNanos &+ Int64(latest + Self.margin))
    }

    /// An instant at or after the monotonic clock's reading now and at most `slack` ns after
    /// it; nil when the bound could be later than that (or there is none).
    ///
    /// The bound, ``bounds(at:)``' latest, exceeds the clock by less than the margin, plus
    /// the anchor's read (the bound extrapolates from the counter read before it, the clock
    /// may have read at its end), plus 1/200 of the time extrapolated (the rate's 1/256, its
    /// measurement's 1/4096, NTP's 500 ppm).
    ///
    /// In integers, as ``estimate(at:)``: the ticks since the anchor (under a second's, so the
    /// product fits) times the latest rate in fixed point, rounded up.
    @inline(__always)
    func upperBound(lateBy slack: Int64) -> Int64? {
        let elapsed = clibev_ticks() &- anchorTicks
        guard elapsed < estimateTicks else { return nil }  // 0 with no rate
        let (high, low) = elapsed.multipliedFullWidth(by: latestNanosPerTickFixed)
        let latest = Int64(truncatingIfNeeded: (high &<< 32) | (low &>> 32)) &+ 1
        // `margin + spread + latest / 200 <= slack`, multiplied out: no division on an add's path.
        guard latest <= (min(slack, 1 << 40) &- slackTaken) &* 200 else { return nil }
        return anchorNanos &+ latest &+ Int64(Self.margin)
    }
}
