import Synchronization

/// The rate of the CPU's counter against the monotonic clock, in nanoseconds per tick,
/// measured from the clock readings that loops pair with counter readings: a property of
/// the machine, so one measurement serves every loop of the process (``shared``), and a
/// loop made on a new thread bounds the clock from its first reading on.
///
/// A rate is measured between two readings at least ``span`` apart, and far enough apart
/// that the time their clock reads took (the counter read before a reading and the one
/// after it) is within 1/8192 of the ticks between them: a clock read slowed by a VM
/// exit or an emulator (valgrind's takes microseconds) then lengthens the measurement
/// instead of spoiling it. The rate is published once two successive rates agree within
/// 1/4096 (a preemption between a pair's two reads spoils one rate, and the next
/// disagrees with it). Two rates that disagree withdraw it until two agree again. Its
/// users allow it an error of 1/256 either way, which covers the measurement's and NTP's
/// slew of the clock (at most 500 ppm).
final class CycleRate: Sendable {
    /// The process's measurement.
    static let shared = CycleRate()

    /// The shortest time between the two readings of a measurement (ns).
    static let span: Int64 = 1_000_000

    /// The published rate's bits (`Double`); 0 while there is none.
    private let published = Atomic<UInt64>(0)
    /// The clock reading before which no reading can end a measurement: most readings are
    /// turned away by this one load, without the lock.
    private let nextMeasurement = Atomic<Int64>(.min)
    private let measurement = Mutex(Measurement())

    private struct Measurement {
        var baseNanos: Int64 = 0
        var baseTicks: UInt64 = 0
        /// How many ticks the base reading's clock read took.
        var baseSpread: UInt64 = 0
        var lastRate = 0.0
    }

    /// The most a reading's clock read may take, over the ticks of a measurement: two
    /// readings' reads then move a rate by at most 1/8192, so two good rates agree within
    /// 1/4096 (what this earns under valgrind: PROFILING.md, "Tricks and what they earn").
    private static let spreadsPerMeasurement: UInt64 = 8192

    /// The rate (ns per tick), or 0 when none is known.
    var nanosPerTick: Double { Double(bitPattern: published.load(ordering: .relaxed)) }

    /// Takes a clock reading, `nanos`, the counter read just before it, `ticks`, and how
    /// many ticks the read took, `spread` (the counter after it minus `ticks`). A reading
    /// that finds another thread measuring is left out: so is one in a forked child whose
    /// copy of the lock was held by a thread of the parent's, which the child does not have.
    func observe(nanos: Int64, ticks: UInt64, spread: UInt64 = 0) {
        guard nanos >= nextMeasurement.load(ordering: .relaxed) else { return }
        _ = measurement.withLockIfAvailable { state in
            var next = Self.span
            defer { nextMeasurement.store(state.baseNanos + next, ordering: .relaxed) }
            guard state.baseTicks != 0 else {  // the first reading
                (state.baseNanos, state.baseTicks, state.baseSpread) = (nanos, ticks, spread)
                return
            }
            // A reading from before the span's end came from another thread, late: no use.
            guard nanos - state.baseNanos >= Self.span else { return }
            guard ticks > state.baseTicks else {
                // The counter went back while the clock went on (a CPU out of step): start over.
                (state.baseNanos, state.baseTicks, state.baseSpread, state.lastRate) = (nanos, ticks, spread, 0)
                published.store(0, ordering: .relaxed)
                return
            }
            let elapsed = ticks - state.baseTicks
            let needed = (state.baseSpread &+ spread).multipliedReportingOverflow(by: Self.spreadsPerMeasurement)
            guard !needed.overflow, elapsed >= needed.partialValue else {
                // Too close for reads this slow: a base whose read was slower than this
                // one's gives way to it; otherwise wait until the reads' share is small.
                if spread < state.baseSpread / 2 {
                    (state.baseNanos, state.baseTicks, state.baseSpread) = (nanos, ticks, spread)
                } else if !needed.overflow {
                    next = Int64(Double(nanos - state.baseNanos) * (Double(needed.partialValue) / Double(elapsed)))
                }
                return
            }
            let rate = Double(nanos - state.baseNanos) / Double(elapsed)
            let agrees = abs(rate - state.lastRate) <= state.lastRate / 4096
            published.store(agrees ? rate.bitPattern : 0, ordering: .relaxed)
            (state.baseNanos, state.baseTicks, state.baseSpread, state.lastRate) = (nanos, ticks, spread, rate)
        }
    }
}
