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
        var clock = CycleClock()
        #expect(!clock.isBefore(.max))
        let now = clock.read()
        #expect(!clock.isBefore(now + 3_600_000_000_000))
    }

    @Test("once calibrated it bounds the clock from above, and says so for instants well ahead")
    func calibratedBoundsTheClock() {
        var clock = CycleClock()
        let ahead: Int64 = 50_000_000
        // Readings 12 ms apart (past the 10 ms calibration span) until two rates agree; a
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
