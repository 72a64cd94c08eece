@testable import RunLoopKit
import Testing

/// Seconds to whole nanoseconds: to the nearest, ties away from zero, exact at the ends of
/// the accepted range.
@Suite("Seconds to nanoseconds")
struct NanosecondsTests {
    @Test("rounds to the nearest nanosecond, ties away from zero", arguments: [
        (0, 0), (-0.0, 0), (1e-9, 1), (0.4999999999e-9, 0), (0.5e-9, 1), (1.5e-9, 2), (2.5e-9, 3),
        (-0.5e-9, -1), (-1.5e-9, -2), (1e-10, 0), (0.001, 1_000_000), (1, 1_000_000_000),
        (3600, 3_600_000_000_000), (123.456789012, 123_456_789_012),
        (9e9, 9_000_000_000_000_000_000), (-9e9, -9_000_000_000_000_000_000),
    ] as [(Double, Int64)])
    func roundsToNearest(seconds: Double, nanoseconds: Int64) {
        #expect(EVTimer.nanoseconds(seconds) == nanoseconds)
    }
}
