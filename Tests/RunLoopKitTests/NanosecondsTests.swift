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

    /// The conversion rounds without libm's `round`: it must agree with `rounded()` on every
    /// value, around 2^52 ns (where products stop having fractions) and at random magnitudes.
    @Test("agrees with rounded() around 2^52 ns and on random values")
    func agreesWithRounded() {
        var random = SplitMix(seed: 25)
        var values: [Double] = [
            4503599.627370496, 4503599.627370495, 4503599.6273704955, 4503599.627370497,
            -4503599.627370496, -4503599.6273704955, 0.1, -0.1, 2.5e-9, -2.5e-9, 1e-300, -1e-300,
        ]
        for _ in 0..<20_000 {
            var magnitude = Double(random.next() % 1_000_000_000) / 1e9
            for _ in 0..<(random.next() % 19) { magnitude *= 10 }
            for _ in 0..<(random.next() % 12) { magnitude /= 10 }
            values.append(random.next() % 2 == 0 ? magnitude : -magnitude)
        }
        for seconds in values where abs(seconds) <= 9e9 {
            #expect(EVTimer.nanoseconds(seconds) == Int64((seconds * 1e9).rounded()), "seconds \(seconds)")
        }
    }
}
