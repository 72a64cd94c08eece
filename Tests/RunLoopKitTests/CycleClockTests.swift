internal import CRunLoopKitLibev
@testable import RunLoopKit
@testable import RunLoopKitBackend
import RunLoopKitPlatform
import Glibc
import Testing

/// The counter-based bounds of the monotonic clock that spare a repeating timer's fire, and
/// an add, their clock read: they must always hold the clock's reading.
@Suite("Cycle clock")
struct CycleClockTests {
    @Test("with no rate measured yet it has no bounds")
    func uncalibratedHasNoBounds() {
        var clock = CycleClock(rate: CycleRate())
        #expect(clock.bounds(at: CycleClock.ticks()) == nil)
        _ = clock.read()
        #expect(clock.bounds(at: CycleClock.ticks()) == nil)
        #expect(!clock.isBefore(.max, at: CycleClock.ticks()))
        #expect(clock.upperBound(lateBy: .max) == nil)
    }

    @Test("once calibrated, its bounds and its upper bound hold the clock's reading, and are tight")
    func calibratedBoundsHoldTheClock() {
        var audit = CycleClockAudit(rate: Self.measuredRate())
        audit.run(rounds: 20_000)
        #expect(audit.violations == [:])
        #expect(audit.loosestBounds <= 0)
        // Only with a rate (where the kernel's clock counts the CPU's counter) does it answer.
        if audit.rate.nanosPerTick > 0 { #expect(audit.bounded > 0) }
        var clock = CycleClock(rate: audit.rate)
        _ = clock.read()
        #expect(clock.upperBound(lateBy: 1_999) == nil)  // under the bound's own 2 µs margin
    }
}

extension CycleClockTests {
    /// A rate measured from real readings (`CycleRate.span` apart, until two agree); 0 where
    /// the counter does not drive the clock.
    static func measuredRate() -> CycleRate {
        let rate = CycleRate()
        guard SystemClock.ticksDriveMonotonic() else { return rate }
        var clock = CycleClock(rate: rate)
        for _ in 0..<100 where rate.nanosPerTick == 0 {
            _ = clock.read()
            usleep(UInt32(CycleRate.span / 1_000) + 200)
        }
        return rate
    }

    @Test("an anchor whose clock read took long gives no upper bound that could exceed the slack")
    func slowAnchorReadNarrowsTheUpperBound() throws {
        let rate = Self.measuredRate()
        guard SystemClock.ticksDriveMonotonic() else { return }
        try #require(rate.nanosPerTick > 0)
        var clock = CycleClock(rate: rate)
        // A read that took 3 µs, the clock read at its end: the bound, extrapolated from the
        // counter at its start, is 3 µs later than one from a quick read.
        let ticks = CycleClock.ticks()
        let nanos = clibev_monotonic_ns()
        clock.anchor(nanos: nanos, ticksBefore: ticks - UInt64(3_000 / rate.nanosPerTick), ticksAfter: ticks)
        let bound = clock.upperBound(lateBy: 4_000)
        let after = clibev_monotonic_ns()
        #expect(bound.map { $0 <= after + 4_000 } ?? true)
        #expect(clock.upperBound(lateBy: 20_000) != nil)  // a slack that covers the read still has one
    }

    @Test("a rate is published once two measurements agree, and withdrawn when one disagrees or the counter goes back")
    func rateNeedsTwoAgreeingMeasurements() {
        let rate = CycleRate()
        let span = CycleRate.span
        let ticksPerSpan = UInt64(span) * 2  // 0.5 ns per tick
        rate.observe(nanos: 0, ticks: 1_000)
        rate.observe(nanos: span / 2, ticks: 1_000 + ticksPerSpan / 2)  // within the span: ignored
        rate.observe(nanos: span, ticks: 1_000 + ticksPerSpan)
        #expect(rate.nanosPerTick == 0)  // one measurement
        rate.observe(nanos: 2 * span, ticks: 1_000 + 2 * ticksPerSpan)
        #expect(rate.nanosPerTick == 0.5)
        rate.observe(nanos: 3 * span, ticks: 1_000 + 2 * ticksPerSpan + ticksPerSpan / 2)  // 1 ns per tick
        #expect(rate.nanosPerTick == 0)
        rate.observe(nanos: 4 * span, ticks: 1_000 + 3 * ticksPerSpan + ticksPerSpan / 2)  // 0.5 after 1: disagrees
        #expect(rate.nanosPerTick == 0)
        rate.observe(nanos: 5 * span, ticks: 1_000 + 4 * ticksPerSpan + ticksPerSpan / 2)
        #expect(rate.nanosPerTick > 0)
        rate.observe(nanos: 6 * span, ticks: 10)  // the counter went back
        #expect(rate.nanosPerTick == 0)
    }

    @Test("clock reads that take long (a VM's, an emulator's) lengthen a rate's measurement instead of spoiling it")
    func slowReadsLengthenTheMeasurement() {
        let rate = CycleRate()
        // 1 ns per tick; a reading every millisecond, each read taking 5,000 ticks, its
        // reading landing at the start or the end of the read in turn: over 1 ms the rates
        // are 1/200 apart and never agree; over the 8,192 reads' length they do.
        for reading in 0..<300 {
            let ticks = UInt64(1_000 + reading * 1_000_000)
            let lands = reading % 2 == 0 ? 0 : 5_000
            rate.observe(nanos: Int64(ticks) + Int64(lands), ticks: ticks, spread: 5_000)
        }
        #expect(abs(rate.nanosPerTick - 1) < 1.0 / 4_096)
    }

    /// A libev backend once the process's counter rate is published (or 0.2 s went by, where
    /// the counter does not drive the clock): its grid points then come from the counter too.
    static func calibratedBackend(interval: Int64) throws -> LibevBackend {
        let backend = try LibevBackend()
        let warm = clibev_monotonic_ns()
        while CycleRate.shared.nanosPerTick == 0, clibev_monotonic_ns() - warm < 200_000_000 {
            _ = backend.nextGridPoint(after: warm, every: interval)
            usleep(100)
        }
        return backend
    }

    @Test("the libev backend's next grid point is CF's, whether the counter or the clock told it",
          arguments: [1_000, 1_000_000] as [Int64])
    func nextGridPointIsExact(interval: Int64) throws {
        let backend = try Self.calibratedBackend(interval: interval)
        // Starts from a few intervals behind to half an interval ahead of now.
        for round in 0..<20_000 {
            let start = clibev_monotonic_ns() - Int64(round % 8) * interval + interval / 2
            let before = clibev_monotonic_ns()
            let next = backend.nextGridPoint(after: start, every: interval)
            let after = clibev_monotonic_ns()
            // The first grid point after a reading taken between `before` and `after`.
            #expect((next - start) % interval == 0 && next > start)
            #expect(next > before)
            #expect(next - interval <= after || next - interval == start)
        }
    }

    @Test("timers of one schedule, behind, get CF's grid point while the last skip's is reused",
          arguments: [1_000, 100_000] as [Int64])
    func repeatedScheduleSkipsExactly(interval: Int64) throws {
        let backend = try Self.calibratedBackend(interval: interval)
        // A hundred timers in a row with one schedule, a few intervals behind: the clock
        // crosses grid points meanwhile (at 1 µs, many times).
        for _ in 0..<200 {
            let start = clibev_monotonic_ns() - 3 * interval
            for _ in 0..<100 {
                let before = clibev_monotonic_ns()
                let next = backend.nextGridPoint(after: start, every: interval)
                let after = clibev_monotonic_ns()
                #expect((next - start) % interval == 0 && next > start)
                #expect(next > before)
                #expect(next - interval <= after)
            }
        }
    }

    @Test("the next grid point skips every point passed, and stays at the end of the clock")
    func firstGridPointArithmetic() {
        #expect(Int64(100).firstGridPoint(every: 10, after: 50) == 110)
        #expect(Int64(100).firstGridPoint(every: 10, after: 109) == 110)
        #expect(Int64(100).firstGridPoint(every: 10, after: 110) == 120)
        #expect(Int64(100).firstGridPoint(every: 10, after: 1_234) == 1_240)
        #expect(Int64.max.firstGridPoint(every: 10, after: 0) == .max)
        #expect(Int64(.max - 5).firstGridPoint(every: 10, after: .max - 1) == .max)
    }
}

/// How long `make clock-soak` asks the soak to run, in seconds (nil: the soak is off).
private let clockSoakSeconds = getenv("RUNLOOPKIT_CLOCK_SOAK_SECONDS").flatMap { Double(String(cString: $0)) }

/// The soak of the counter's bounds: `make clock-soak` runs it for minutes, idle and with
/// both cores busy, and it prints what it checked. Off unless `RUNLOOPKIT_CLOCK_SOAK_SECONDS`
/// is set.
@Suite("Soak: cycle clock", .enabled(if: clockSoakSeconds != nil))
struct CycleClockSoak {

    @Test("over minutes, no answer of the counter's bounds is contradicted by the clock")
    func soak() {
        let seconds = clockSoakSeconds ?? 0
        var audit = CycleClockAudit(rate: CycleClockTests.measuredRate())
        let end = clibev_monotonic_ns() + Int64(seconds * 1e9)
        var rounds = 0
        while clibev_monotonic_ns() < end {
            audit.run(rounds: 10_000, pauses: true)
            rounds += 10_000
        }
        print("""
            cycle clock soak: \(seconds) s, \(rounds) questions, \(audit.bounded) with bounds; \
            violations: \(audit.violations.isEmpty ? "none" : "\(audit.violations)"); \
            widest bounds past their width: \(audit.loosestBounds) ns; \
            latest upper bound past the slack: \(audit.latestUpperBound) ns
            """)
        #expect(audit.violations == [:])
        #expect(audit.loosestBounds <= 0)
    }
}
