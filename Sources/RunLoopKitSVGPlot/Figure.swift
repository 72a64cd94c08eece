import Foundation

/// Charts side by side in one SVG image, with a title: small, dependency-free, and readable
/// in any browser.
///
/// ```swift
/// let figure = Figure(title: "Phase error", charts: [
///     Chart(title: "aligned", xLabel: "time (s)", yLabel: "error (ms)", series: [
///         Chart.Series(label: "aligned", points: [Chart.Point(x: 0, y: 0.02), Chart.Point(x: 1, y: 0.03)]),
///     ]),
/// ])
/// try figure.write(toFile: NSTemporaryDirectory() + "phase.svg")
/// ```
public struct Figure: Sendable, Equatable {
    /// The title above the charts.
    public var title: String
    /// The charts, left to right.
    public var charts: [Chart]
    /// The size of one chart, in pixels.
    static let chartSize = (width: 420, height: 300)

    /// The colours series take: one per label, in order of first appearance in the figure, so
    /// that a label has the same colour in every chart.
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]

    /// Creates a figure.
    ///
    /// - Parameters:
    ///   - title: the title above the charts.
    ///   - charts: the charts, left to right.
    public init(title: String, charts: [Chart]) {
        self.title = title
        self.charts = charts
    }

    /// The figure as an SVG document.
    ///
    /// - Returns: the SVG text, one element per line.
    public func svg() -> String {
        let (width, height) = Self.chartSize
        let top = 36
        let total = (width: max(1, charts.count) * width, height: height + top)
        var lines = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(total.width)" height="\#(total.height)" "#
                + #"viewBox="0 0 \#(total.width) \#(total.height)" font-family="sans-serif" font-size="12">"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
            #"<text x="\#(total.width / 2)" y="22" text-anchor="middle" font-size="16">\#(Self.escaped(title))</text>"#,
        ]
        var labels: [String] = []
        for label in charts.flatMap({ $0.series.map(\.label) }) where !labels.contains(label) { labels.append(label) }
        let colours = Dictionary(uniqueKeysWithValues: labels.enumerated().map {
            ($1, Self.palette[$0 % Self.palette.count])
        })
        for (index, chart) in charts.enumerated() {
            lines.append(#"<g transform="translate(\#(index * width),\#(top))">"#)
            lines += panel(chart, width: Double(width), height: Double(height), colours: colours)
            lines.append("</g>")
        }
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes ``svg()`` to `path`.
    ///
    /// - Parameter path: the file to create or replace.
    /// - Throws: the error of writing the file.
    public func write(toFile path: String) throws {
        try svg().write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// One chart's elements, in a `width` × `height` box at the origin.
    private func panel(_ chart: Chart, width: Double, height: Double, colours: [String: String]) -> [String] {
        let plot = (left: 62.0, right: width - 14, top: 46.0, bottom: height - 44)
        let bounds = chart.bounds
        let (xTicks, xRange) = Axis.ticks(for: bounds.x)
        let (yTicks, yRange) = Axis.ticks(for: bounds.y)
        func px(_ x: Double) -> Double {
            plot.left + (x - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * (plot.right - plot.left)
        }
        func py(_ y: Double) -> Double {
            plot.bottom - (y - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound) * (plot.bottom - plot.top)
        }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }
        var lines = [#"<text x="\#(f(width / 2))" y="16" text-anchor="middle" font-size="13">\#(Self.escaped(chart.title))</text>"#]
        let xStep = xTicks.count > 1 ? xTicks[1] - xTicks[0] : 1
        for value in xTicks {
            lines.append(#"<line x1="\#(f(px(value)))" y1="\#(f(plot.top))" x2="\#(f(px(value)))" y2="\#(f(plot.bottom))" stroke="gainsboro"/>"#)
            lines.append(#"<text x="\#(f(px(value)))" y="\#(f(plot.bottom + 15))" text-anchor="middle">\#(Axis.label(value, step: xStep))</text>"#)
        }
        let yStep = yTicks.count > 1 ? yTicks[1] - yTicks[0] : 1
        for value in yTicks {
            lines.append(#"<line x1="\#(f(plot.left))" y1="\#(f(py(value)))" x2="\#(f(plot.right))" y2="\#(f(py(value)))" stroke="gainsboro"/>"#)
            lines.append(#"<text x="\#(f(plot.left - 5))" y="\#(f(py(value) + 4))" text-anchor="end">\#(Axis.label(value, step: yStep))</text>"#)
        }
        lines.append(#"<rect x="\#(f(plot.left))" y="\#(f(plot.top))" width="\#(f(plot.right - plot.left))" height="\#(f(plot.bottom - plot.top))" fill="none" stroke="dimgray"/>"#)
        lines.append(#"<text x="\#(f((plot.left + plot.right) / 2))" y="\#(f(height - 8))" text-anchor="middle">\#(Self.escaped(chart.xLabel))</text>"#)
        lines.append(#"<text transform="translate(14,\#(f((plot.top + plot.bottom) / 2))) rotate(-90)" text-anchor="middle">\#(Self.escaped(chart.yLabel))</text>"#)
        var legendX = plot.left
        for series in chart.series {
            let colour = colours[series.label] ?? "black"
            let points = series.points.filter { $0.x.isFinite && $0.y.isFinite }
            let path = points.map { "\(f(px($0.x))),\(f(py($0.y)))" }.joined(separator: " ")
            lines.append(#"<polyline points="\#(path)" fill="none" stroke="\#(colour)" stroke-width="1.5"/>"#)
            if points.count <= 120 {
                for point in points {
                    lines.append(#"<circle cx="\#(f(px(point.x)))" cy="\#(f(py(point.y)))" r="2.5" fill="\#(colour)"/>"#)
                }
            }
            // The legend: a row between the title and the plot.
            let legendY = 34.0
            lines.append(#"<line x1="\#(f(legendX))" y1="\#(f(legendY - 4))" x2="\#(f(legendX + 16))" y2="\#(f(legendY - 4))" stroke="\#(colour)" stroke-width="3"/>"#)
            lines.append(#"<text x="\#(f(legendX + 20))" y="\#(f(legendY))">\#(Self.escaped(series.label))</text>"#)
            legendX += 34 + 7 * Double(series.label.count)
        }
        return lines
    }

    /// `text` with XML's special characters escaped (for this package's other SVG writers too).
    package static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
