import Foundation

/// A small SVG chart writer (Foundation only, for number formatting): line charts, grouped
/// bar charts and horizontal box plots, on linear or log axes.
struct SVGChart {
    /// A named, coloured list of points (bars: `x` is the group's index).
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
    }

    /// One horizontal box: whiskers p5–p95, box p25–p75, a bar at the median, a dot at the max.
    struct Box {
        var name: String
        var color: String
        var p5, p25, p50, p75, p95, max: Double
    }

    /// What is drawn.
    enum Content {
        /// Lines through each series' points, with a dot at each point.
        case lines([Series])
        /// For each group (x axis), one bar per series.
        case bars(groups: [String], series: [Series])
        /// One box per row, the value on the x axis.
        case boxes([Box])
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var logX = false
    var logY = false
    var content: Content
    let width = 760.0, height = 420.0, right = 190.0, top = 40.0, bottom = 55.0

    /// A palette of distinguishable colours, by index.
    static func color(_ index: Int) -> String {
        ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"][index % 8]
    }

    /// Room for the y labels: the box names when there are boxes (about 7 px a character).
    private var left: Double {
        if case .boxes(let boxes) = content { return Swift.max(90, Double(boxes.map(\.name.count).max() ?? 0) * 7 + 20) }
        return 90
    }
    private var plotWidth: Double { width - left - right }
    private var plotHeight: Double { height - top - bottom }
    private var base: Double { top + plotHeight }

    /// The SVG document.
    func render() -> String {
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(f(width))" height="\(f(height))" viewBox="0 0 \(f(width)) \(f(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(f(width / 2))" y="22" text-anchor="middle" font-size="15" font-weight="bold">\(escape(title))</text>
        <text x="\(f(left + plotWidth / 2))" y="\(f(height - 12))" text-anchor="middle">\(escape(xLabel))</text>
        <text transform="translate(18 \(f(top + plotHeight / 2))) rotate(-90)" text-anchor="middle">\(escape(yLabel))</text>

        """
        switch content {
        case .lines(let series): out += lines(series)
        case .bars(let groups, let series): out += bars(groups, series)
        case .boxes(let boxes): out += self.boxes(boxes)
        }
        out += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#333\"/>\n"
        return out + "</svg>\n"
    }

    private func lines(_ series: [Series]) -> String {
        let points = series.flatMap(\.points)
        let x = Axis(values: points.map(\.x), log: logX, from: left, to: left + plotWidth)
        let y = Axis(values: points.map(\.y), log: logY, from: base, to: top)
        var out = ticks(x, vertical: false) + ticks(y, vertical: true)
        for (index, s) in series.enumerated() {
            let path = s.points.sorted { $0.x < $1.x }.map { "\(f(x.position($0.x))),\(f(y.position($0.y)))" }
            out += "<polyline fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"2\" points=\"\(path.joined(separator: " "))\"/>\n"
            for p in s.points {
                out += "<circle cx=\"\(f(x.position(p.x)))\" cy=\"\(f(y.position(p.y)))\" r=\"3\" fill=\"\(s.color)\"/>\n"
            }
            out += legend(index, s.name, color: s.color)
        }
        return out
    }

    private func bars(_ groups: [String], _ series: [Series]) -> String {
        let y = Axis(values: series.flatMap { $0.points.map(\.y) }, log: logY, from: base, to: top, includeZero: !logY)
        var out = ticks(y, vertical: true)
        let slot = plotWidth / Double(Swift.max(groups.count, 1))
        let barWidth = slot * 0.8 / Double(Swift.max(series.count, 1))
        for (g, group) in groups.enumerated() {
            out += text(left + slot * (Double(g) + 0.5), base + 16, group, size: 11)
        }
        for (index, s) in series.enumerated() {
            for p in s.points {
                let x0 = left + slot * (p.x + 0.1) + barWidth * Double(index)
                let y0 = Swift.min(y.position(p.y), base)
                out += "<rect x=\"\(f(x0))\" y=\"\(f(y0))\" width=\"\(f(barWidth * 0.92))\" height=\"\(f(abs(base - y.position(p.y))))\" fill=\"\(s.color)\"/>\n"
                out += text(x0 + barWidth * 0.46, y0 - 3, label(p.y), size: 9)
            }
            out += legend(index, s.name, color: s.color)
        }
        return out
    }

    private func boxes(_ boxes: [Box]) -> String {
        let x = Axis(values: boxes.flatMap { [$0.p5, $0.max] }, log: logX, from: left, to: left + plotWidth)
        var out = ticks(x, vertical: false)
        let row = plotHeight / Double(Swift.max(boxes.count, 1))
        for (index, b) in boxes.enumerated() {
            let cy = top + row * (Double(index) + 0.5)
            let h = Swift.min(row * 0.5, 22)
            out += text(left - 6, cy + 4, b.name, anchor: "end", size: 11)
            out += "<line x1=\"\(f(x.position(b.p5)))\" y1=\"\(f(cy))\" x2=\"\(f(x.position(b.p95)))\" y2=\"\(f(cy))\" stroke=\"\(b.color)\" stroke-width=\"1.5\"/>\n"
            out += "<rect x=\"\(f(x.position(b.p25)))\" y=\"\(f(cy - h / 2))\" width=\"\(f(Swift.max(x.position(b.p75) - x.position(b.p25), 1)))\" height=\"\(f(h))\" fill=\"\(b.color)\" fill-opacity=\"0.35\" stroke=\"\(b.color)\"/>\n"
            out += "<line x1=\"\(f(x.position(b.p50)))\" y1=\"\(f(cy - h / 2))\" x2=\"\(f(x.position(b.p50)))\" y2=\"\(f(cy + h / 2))\" stroke=\"#000\" stroke-width=\"2\"/>\n"
            out += "<circle cx=\"\(f(x.position(b.max)))\" cy=\"\(f(cy))\" r=\"3.5\" fill=\"none\" stroke=\"\(b.color)\" stroke-width=\"1.5\"/>\n"
        }
        return out + legend(0, "whiskers p5–p95, box p25–p75") + legend(1, "bar: median, ring: max")
    }

    /// Line `index` of the legend right of the plot: a swatch of `color` and `name`, or
    /// `name` alone in small type.
    private func legend(_ index: Int, _ name: String, color: String? = nil) -> String {
        let y = top + 10 + Double(index) * 18
        guard let color else { return text(left + plotWidth + 12, y, name, anchor: "start", size: 11) }
        return "<rect x=\"\(f(left + plotWidth + 12))\" y=\"\(f(y - 9))\" width=\"12\" height=\"12\" fill=\"\(color)\"/>\n"
            + text(left + plotWidth + 30, y + 1, name, anchor: "start")
    }

    /// The grid lines and labels of `axis`: horizontal lines for the vertical axis.
    private func ticks(_ axis: Axis, vertical: Bool) -> String {
        axis.tickValues.map { value in
            let p = axis.position(value)
            return vertical
                ? "<line x1=\"\(f(left))\" y1=\"\(f(p))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(p))\" stroke=\"#ddd\"/>\n"
                    + text(left - 6, p + 4, label(value), anchor: "end")
                : "<line x1=\"\(f(p))\" y1=\"\(f(top))\" x2=\"\(f(p))\" y2=\"\(f(base))\" stroke=\"#ddd\"/>\n"
                    + text(p, base + 16, label(value))
        }.joined()
    }

    /// Maps values to positions between `from` and `to`, on a linear or log10 scale.
    private struct Axis {
        let log: Bool
        let low: Double, high: Double
        let from: Double, to: Double

        init(values: [Double], log: Bool, from: Double, to: Double, includeZero: Bool = false) {
            self.log = log
            self.from = from
            self.to = to
            let usable = values.filter { $0.isFinite && (!log || $0 > 0) }
            var low = usable.min() ?? 1, high = usable.max() ?? 10
            if includeZero { low = min(low, 0) }
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

    /// A tick or bar label: 1.5k, 20, 0.01.
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
