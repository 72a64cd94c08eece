import Foundation

/// Round tick values for an axis: 1, 2 or 5 times a power of ten apart, about five of them.
enum Axis {
    /// The tick values covering `range`, and the range widened to the outer ticks.
    static func ticks(for range: ClosedRange<Double>, count: Int = 5) -> (values: [Double], range: ClosedRange<Double>) {
        let rough = (range.upperBound - range.lowerBound) / Double(count)
        let power = pow(10, (log10(rough)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power
        let low = (range.lowerBound / step).rounded(.down) * step
        let high = (range.upperBound / step).rounded(.up) * step
        let values = stride(from: low, through: high + step / 2, by: step).map { $0 }
        return (values, low...high)
    }

    /// A tick value as text: no more digits than the step needs.
    static func label(_ value: Double, step: Double) -> String {
        let digits = max(0, Int(-(log10(step)).rounded(.down)))
        return String(format: "%.\(digits)f", abs(value) < step / 1e6 ? 0 : value)
    }
}
