import Foundation

/// The report's one chart style (Foundation only, for number formatting): a line through each
/// series' points on linear or log axes; with `categories`, x = 0, 1, … are those names.
struct LineChart {
    /// A named line of points.
    struct Series {
        var name: String
        var points: [(x: Double, y: Double)]
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var logX = false
    var logY = false
    var categories: [String] = []
    var series: [Series]
    let width = 760.0, height = 420.0, left = 90.0, right = 190.0, top = 40.0, bottom = 55.0
    private var plotWidth: Double { width - left - right }
    private var base: Double { height - bottom }

    /// The SVG document.
    func render() -> String {
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(f(width))" height="\(f(height))" viewBox="0 0 \(f(width)) \(f(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(f(width / 2))" y="22" text-anchor="middle" font-size="15" font-weight="bold">\(escape(title))</text>
        <text x="\(f(left + plotWidth / 2))" y="\(f(height - (categories.isEmpty ? 12 : 5)))" text-anchor="middle">\(escape(xLabel))</text>
        <text transform="translate(18 \(f((top + base) / 2))) rotate(-90)" text-anchor="middle">\(escape(yLabel))</text>

        """
        let points = series.flatMap(\.points)
        let x = Axis(values: points.map(\.x), log: logX, from: left, to: left + plotWidth)
        let y = Axis(values: points.map(\.y), log: logY, from: base, to: top)
        let slot = plotWidth / Double(max(categories.count, 1))
        let px = { (value: Double) in categories.isEmpty ? x.position(value) : left + slot * (value + 0.5) }
        for value in y.tickValues {
            out += "<line x1=\"\(f(left))\" y1=\"\(f(y.position(value)))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y.position(value)))\" stroke=\"#ddd\"/>\n"
            out += text(left - 6, y.position(value) + 4, label(value), anchor: "end")
        }
        let xTicks = categories.isEmpty ? x.tickValues.map { ($0, label($0)) } : categories.enumerated().map { (Double($0), $1) }
        for (value, name) in xTicks {
            out += "<line x1=\"\(f(px(value)))\" y1=\"\(f(top))\" x2=\"\(f(px(value)))\" y2=\"\(f(base))\" stroke=\"#ddd\"/>\n"
            // Category names alternate between two lines, so that long neighbours do not overlap.
            out += text(px(value), base + 16 + (categories.isEmpty ? 0 : Double(Int(value) % 2) * 12), name,
                        size: categories.isEmpty ? nil : 11)
        }
        for (index, s) in series.enumerated() {
            let color = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"][index % 8]
            let path = s.points.sorted { $0.x < $1.x }.map { "\(f(px($0.x))),\(f(y.position($0.y)))" }
            out += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path.joined(separator: " "))\"/>\n"
            for p in s.points {
                out += "<circle cx=\"\(f(px(p.x)))\" cy=\"\(f(y.position(p.y)))\" r=\"3\" fill=\"\(color)\"/>\n"
            }
            let legendY = top + 10 + Double(index) * 18
            out += "<rect x=\"\(f(left + plotWidth + 12))\" y=\"\(f(legendY - 9))\" width=\"12\" height=\"12\" fill=\"\(color)\"/>\n"
            out += text(left + plotWidth + 30, legendY + 1, s.name, anchor: "start")
        }
        out += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(base - top))\" fill=\"none\" stroke=\"#333\"/>\n"
        return out + "</svg>\n"
    }

    /// Maps values to positions between `from` and `to`, on a linear or log10 scale.
    private struct Axis {
        let log: Bool
        let low: Double, high: Double
        let from: Double, to: Double

        init(values: [Double], log: Bool, from: Double, to: Double) {
            self.log = log
            self.from = from
            self.to = to
            let usable = values.filter { $0.isFinite && (!log || $0 > 0) }
            var low = usable.min() ?? 1, high = usable.max() ?? 10
            if log {
                low = pow(10, (log10(low)).rounded(.down))
                high = pow(10, (log10(high)).rounded(.up))
                if high <= low { high = low * 10 }
            } else {
                let step = Axis.step(high - low)
                low = (low / step).rounded(.down) * step
                high = (high / step).rounded(.up) * step
                if high <= low { high = low + step }
            }
            self.low = low
            self.high = high
        }

        static func step(_ span: Double) -> Double {
            guard span > 0 else { return 1 }
            let raw = span / 5
            let power = pow(10, (log10(raw)).rounded(.down))
            return [1, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? power * 10
        }

        func position(_ value: Double) -> Double {
            let v = log ? log10(max(value, low)) : value
            let (a, b) = log ? (log10(low), log10(high)) : (low, high)
            return from + (to - from) * (min(max(v, a), b) - a) / (b - a)
        }

        var tickValues: [Double] {
            if log { return stride(from: log10(low), through: log10(high) + 1e-9, by: 1).map { pow(10, $0.rounded()) } }
            let step = Axis.step(high - low)
            return stride(from: low, through: high + step / 1e6, by: step).map { $0 }
        }
    }

    /// A text element at (`x`, `y`).
    private func text(_ x: Double, _ y: Double, _ text: String, anchor: String = "middle", size: Int? = nil) -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\"\(size.map { " font-size=\"\($0)\"" } ?? "")>\(escape(text))</text>\n"
    }

    /// A coordinate with one decimal.
    private func f(_ value: Double) -> String { String(format: "%.1f", value) }

    /// A tick label: 1.5k, 20, 0.01.
    private func label(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1e6 { return String(format: "%gM", value / 1e6) }
        if magnitude >= 1e4 { return String(format: "%gk", value / 1e3) }
        if magnitude >= 100 || magnitude == 0 { return String(format: "%.0f", value) }
        return String(format: "%.3g", value)
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
