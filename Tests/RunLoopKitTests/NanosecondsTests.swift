@testable import RunLoopKit
import Testing

/// Seconds to nanoseconds without libm's `round`: the same answer as `rounded()`.
@Suite("Seconds to nanoseconds")
struct NanosecondsTests {
    @Test("equals Int64((seconds * 1e9).rounded()) on ties, extremes and random values")
    func matchesRounded() {
        var random = SplitMix(seed: 7)
        var values: [Double] = [
            0, -0.0, 1e-9, 0.5e-9, 1.5e-9, 2.5e-9, -0.5e-9, -1.5e-9, 0.4999999999e-9, 1, 3600, 9e9, -9e9,
            4503599.627370496, 4503599.627370497, -4503599.627370496, 0.1, 0.001, 1e-10, 123.456789012345,
        ]
        for _ in 0..<20_000 {
            let magnitude = Double(random.next() % 1_000_000) / 1e6 * pow10(Int(random.next() % 20) - 10)
            values.append(random.next() % 2 == 0 ? magnitude : -magnitude)
        }
        for seconds in values {
            #expect(EVTimer.nanoseconds(seconds) == Int64((seconds * 1e9).rounded()), "seconds \(seconds)")
        }
    }

    private func pow10(_ exponent: Int) -> Double {
        var value = 1.0
        for _ in 0..<abs(exponent) { value *= 10 }
        return exponent < 0 ? 1 / value : value
    }
}
