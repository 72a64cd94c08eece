internal import CLibev
@testable import RunLoopKit
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

    @Test("once calibrated its bounds hold the clock's reading, and are tight")
    func calibratedBoundsHoldTheClock() {
        let rate = Self.measuredRate()
        var clock = CycleClock(rate: rate)
        var anchor = clock.read()
        // Whether a rate was published at a read (bounds extrapolate with the rate of the
        // last read); a counter that jumps, as on a busy VM, may withdraw it in between.
        var readWithRate = rate.nanosPerTick > 0
        let publishedAtStart = readWithRate
        var bounded = 0
        for round in 0..<20_000 {
            if round % 100 == 0 {  // a loop reads the clock now and then
                anchor = clock.read()
                if rate.nanosPerTick > 0 { readWithRate = true }
            }
            // The clock reads between `before` and `after` at the call: the bounds must
            // reach both ways.
            let before = clibev_monotonic_ns()
            let ticks = CycleClock.ticks()
            guard let (earliest, latest) = clock.bounds(at: ticks) else { continue }
            let after = clibev_monotonic_ns()
            #expect(earliest <= after)
            #expect(latest >= before)
            // 2 µs each side, the anchor's read (under 2 µs), 1/256 of the elapsed time each side.
            #expect(latest - earliest <= 6_000 + (after - anchor) / 100)
            #expect(!clock.isBefore(before, at: ticks))
            #expect(clock.isBefore(latest + 1, at: ticks))
            bounded += 1
        }
        // Only with a rate (where the kernel's clock counts the CPU's counter) does it answer;
        // a read that was preempted gives no bounds until the next.
        if !readWithRate { #expect(bounded == 0) }
        if publishedAtStart, rate.nanosPerTick > 0 { #expect(bounded > 0) }  // published throughout
    }
}

extension CycleClockTests {
    /// A rate measured from real readings (`CycleRate.span` apart, until two agree); 0 where
    /// the counter does not drive the clock.
    static func measuredRate() -> CycleRate {
        let rate = CycleRate()
        guard clibev_ticks_drive_monotonic() != 0 else { return rate }
        var clock = CycleClock(rate: rate)
        for _ in 0..<100 where rate.nanosPerTick == 0 {
            _ = clock.read()
            usleep(UInt32(CycleRate.span / 1_000) + 200)
        }
        return rate
    }

    @Test("its upper bound is never before the clock, and late by no more than the slack asked")
    func upperBoundIsLateByAtMostTheSlack() {
        let rate = Self.measuredRate()
        var clock = CycleClock(rate: rate)
        _ = clock.read()
        // Whether a rate was published at a read (a bound extrapolates with the rate of the
        // last read); a counter that jumps, as on a busy VM, may withdraw it in between.
        var readWithRate = rate.nanosPerTick > 0
        let publishedAtStart = readWithRate
        var bounded = 0
        for _ in 0..<20_000 {
            let before = clibev_monotonic_ns()
            guard let bound = clock.upperBound(lateBy: 4_000) else {
                _ = clock.read()  // too old an anchor (or no rate): read, as the backend does
                if rate.nanosPerTick > 0 { readWithRate = true }
                continue
            }
            let after = clibev_monotonic_ns()
            #expect(bound >= before)
            #expect(bound <= after + 4_000)
            bounded += 1
        }
        if !readWithRate { #expect(bounded == 0) }
        if publishedAtStart, rate.nanosPerTick > 0 { #expect(bounded > 0) }  // published throughout
        #expect(clock.upperBound(lateBy: 1_999) == nil)  // under the bound's own 2 µs margin
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

    @Test("the libev backend's next grid point is CF's, whether the counter or the clock told it",
          arguments: [1_000, 1_000_000] as [Int64])
    func nextGridPointIsExact(interval: Int64) throws {
        let backend = try LibevBackend()
        let warm = clibev_monotonic_ns()
        while CycleRate.shared.nanosPerTick == 0, clibev_monotonic_ns() - warm < 200_000_000 {
            _ = backend.nextGridPoint(after: EVRunLoop.Instant(nanoseconds: warm), every: interval)
            usleep(100)
        }
        // Starts from a few intervals behind to half an interval ahead of now.
        for round in 0..<20_000 {
            let start = clibev_monotonic_ns() - Int64(round % 8) * interval + interval / 2
            let before = clibev_monotonic_ns()
            let next = backend.nextGridPoint(after: EVRunLoop.Instant(nanoseconds: start), every: interval).nanoseconds
            let after = clibev_monotonic_ns()
            // The first grid point after a reading taken between `before` and `after`.
            #expect((next - start) % interval == 0 && next > start)
            #expect(next > before)
            #expect(next - interval <= after || next - interval == start)
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
