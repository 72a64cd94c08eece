import Foundation

/// How numbers appear in the table: three significant digits, thousands grouped.
enum NumberFormat {
    static func value(_ x: Double) -> String {
        guard x.isFinite else { return "–" }
        let magnitude = abs(x)
        if magnitude >= 1000 { return Int(x.rounded()).grouped }
        if magnitude >= 100 { return String(format: "%.0f", x) }
        if magnitude >= 10 { return String(format: "%.1f", x) }
        if magnitude >= 1 { return String(format: "%.2f", x) }
        if magnitude == 0 { return "0" }
        return String(format: "%.3g", x)
    }

    /// "median ±spread%" (the spread only when the values differ; the range when the
    /// median is zero, where a spread relative to it means nothing).
    static func cell(_ cell: Row.Cell?) -> String {
        switch cell {
        case .measured(let summary)?:
            guard summary.values.count > 1, summary.min != summary.max else { return value(summary.median) }
            if summary.median == 0 { return "0 (\(value(summary.min))–\(value(summary.max)))" }
            return value(summary.median) + " ±\(String(format: "%.0f", summary.spreadPercent))%"
        case .unavailable(let reason)?: return "n/a (\(reason))"
        case nil: return "–"
        }
    }

    static func ratio(_ ratio: Double?) -> String {
        ratio.map { value($0) + "×" } ?? "–"
    }

    /// The pair ratios of a row measured in interleaved pairs: "1.22× (1.15–1.30)", the
    /// median and the lowest and highest pair.
    static func pairs(_ ratios: Summary) -> String {
        guard ratios.values.count > 1 else { return ratio(ratios.median) }
        return ratio(ratios.median) + " (\(value(ratios.min))–\(value(ratios.max)))"
    }
}

extension Int {
    /// The number with thousands separators: 100,000.
    var grouped: String {
        let digits = String(self)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}
