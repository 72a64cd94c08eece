internal import CLibev
@testable import RunLoopKit
import Glibc
import Testing

/// The counter-based bound of the monotonic clock that spares a repeating timer's fire its
/// clock read: it may say "not yet" only when the clock truly reads before the instant.
@Suite("Cycle clock")
struct CycleClockTests {
    @Test("with no rate measured yet it is never sure, whatever the instant")
    func uncalibratedIsNeverSure() {
        var clock = CycleClock(rate: CycleRate())
        #expect(!clock.isBefore(.max))
        let now = clock.read()
        #expect(!clock.isBefore(now + 3_600_000_000_000))
        #expect(clock.upperBound(lateBy: .max) == nil)
    }

    @Test("once calibrated it bounds the clock from above, and says so for instants well ahead")
    func calibratedBoundsTheClock() {
        var clock = CycleClock(rate: CycleRate())
        let ahead: Int64 = 50_000_000
        // Readings 12 ms apart (past the 1 ms calibration span) until two rates agree; a
        // preemption between a pair's two reads can spoil one rate on a busy machine.
        for _ in 0..<40 where !clock.isBefore(clibev_monotonic_ns() + ahead) {
            _ = clock.read()
            usleep(12_000)
            _ = clock.read()
        }
        var sure = 0
        for _ in 0..<10_000 {
            // An instant the clock has passed by the time the answer comes: never "before".
            let passed = clibev_monotonic_ns()
            #expect(!clock.isBefore(passed))
            if clock.isBefore(clibev_monotonic_ns() + ahead) { sure += 1 }
        }
        // Only where the kernel's clock counts the CPU's counter does it ever answer.
        #expect(sure == (clibev_ticks_drive_monotonic() != 0 ? 10_000 : 0))
    }
}

extension CycleClockTests {
    /// A rate measured from real readings (`CycleRate.span` apart, until two agree); 0 where
    /// the counter does not drive the clock.
    static func measuredRate() -> CycleRate {
        let rate = CycleRate()
        guard clibev_ticks_drive_monotonic() != 0 else { return rate }
        var clock = CycleClock(rate: rate)
        for _ in 0..<100 where rate.boundingRate == 0 {
            _ = clock.read()
            usleep(UInt32(CycleRate.span / 1_000) + 200)
        }
        return rate
    }

    @Test("its upper bound is never before the clock, and late by no more than the slack asked")
    func upperBoundIsLateByAtMostTheSlack() {
        var clock = CycleClock(rate: Self.measuredRate())
        _ = clock.read()
        var bounded = 0
        for _ in 0..<20_000 {
            let before = clibev_monotonic_ns()
            guard let bound = clock.upperBound(lateBy: 4_000) else {
                _ = clock.read()  // too old an anchor (or no rate): read, as the backend does
                continue
            }
            let after = clibev_monotonic_ns()
            #expect(bound >= before)
            #expect(bound <= after + 4_000)
            bounded += 1
        }
        if clibev_ticks_drive_monotonic() != 0 { #expect(bounded > 0) }
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
        #expect(rate.boundingRate == 0)  // one measurement
        rate.observe(nanos: 2 * span, ticks: 1_000 + 2 * ticksPerSpan)
        #expect(abs(rate.boundingRate - 0.5 * (1 + 1.0 / 256)) < 1e-12)
        rate.observe(nanos: 3 * span, ticks: 1_000 + 2 * ticksPerSpan + ticksPerSpan / 2)  // 1 ns per tick
        #expect(rate.boundingRate == 0)
        rate.observe(nanos: 4 * span, ticks: 1_000 + 3 * ticksPerSpan + ticksPerSpan / 2)  // 0.5 after 1: disagrees
        #expect(rate.boundingRate == 0)
        rate.observe(nanos: 5 * span, ticks: 1_000 + 4 * ticksPerSpan + ticksPerSpan / 2)
        #expect(rate.boundingRate > 0)
        rate.observe(nanos: 6 * span, ticks: 10)  // the counter went back
        #expect(rate.boundingRate == 0)
    }
}
