/// A growing list of measurements in seconds, with the order statistics the summaries print.
public struct Samples: Sendable {
    /// The measurements, in the order they were taken.
    public private(set) var values: [Double] = []

    /// An empty list.
    public init() {}

    /// Adds one measurement.
    public mutating func append(_ value: Double) { values.append(value) }

    /// How many measurements were taken.
    public var count: Int { values.count }

    /// The arithmetic mean; 0 when empty.
    public var mean: Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }

    /// The population standard deviation around ``mean``; 0 with fewer than two values.
    public var spread: Double {
        guard values.count > 1 else { return 0 }
        let mean = self.mean
        let squares = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        return (squares / Double(values.count)).squareRoot()
    }

    /// The largest measurement; 0 when empty.
    public var maximum: Double { values.max() ?? 0 }

    /// The `q`-quantile (`0...1`), interpolated linearly between neighbours; 0 when empty.
    public func quantile(_ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let position = q * Double(sorted.count - 1)
        let below = Int(position.rounded(.down))
        let above = min(below + 1, sorted.count - 1)
        let fraction = position - Double(below)
        return sorted[below] + (sorted[above] - sorted[below]) * fraction
    }

    /// The median (the 0.5 quantile).
    public var median: Double { quantile(0.5) }

    /// The 99th percentile.
    public var p99: Double { quantile(0.99) }

    /// The same measurements, each replaced by its absolute value.
    public var magnitudes: Samples {
        var result = Samples()
        result.values = values.map(abs)
        return result
    }
}
