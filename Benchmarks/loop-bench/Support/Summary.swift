/// Order statistics of a list of numbers: what every table cell is made of.
struct Summary: Codable, Sendable {
    /// The values, sorted ascending.
    let values: [Double]

    init(_ values: [Double]) { self.values = values.sorted() }

    var median: Double { percentile(50) }
    var min: Double { values.first ?? .nan }
    var max: Double { values.last ?? .nan }

    /// Half the range relative to the median, in percent: "±x%" in the table.
    var spreadPercent: Double {
        guard values.count > 1, median != 0 else { return 0 }
        return (max - min) / 2 / abs(median) * 100
    }

    /// The median and p99 of values in ns, in µs: a latency's two rows.
    var microseconds: [Double] { [median / 1e3, percentile(99) / 1e3] }

    /// The `p`-th percentile (0...100), by linear interpolation between closest ranks.
    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let rank = p / 100 * Double(values.count - 1)
        let low = Int(rank.rounded(.down))
        let high = Swift.min(low + 1, values.count - 1)
        let weight = rank - Double(low)
        return values[low] * (1 - weight) + values[high] * weight
    }
}
