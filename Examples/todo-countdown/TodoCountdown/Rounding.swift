import Foundation

/// `value` rounded to `digits` decimal places, so the JSON summary stays readable.
func rounded(_ value: Double, _ digits: Int) -> Double {
    let scale = pow(10, Double(digits))
    return (value * scale).rounded() / scale
}
