/// One panel of a figure: a title, two labelled axes and the series drawn on them.
public struct Chart: Sendable, Equatable {
    /// A labelled line of points, drawn with its own colour and named in the legend.
    public struct Series: Sendable, Equatable {
        /// The name in the legend.
        public var label: String
        /// The points, in the order the line joins them.
        public var points: [Point]

        /// Creates a series.
        ///
        /// - Parameters:
        ///   - label: the name in the legend.
        ///   - points: the points, in drawing order.
        public init(label: String, points: [Point]) {
            self.label = label
            self.points = points
        }
    }

    /// A point in the chart's units.
    public struct Point: Sendable, Equatable {
        /// The horizontal value.
        public var x: Double
        /// The vertical value.
        public var y: Double

        /// Creates a point.
        ///
        /// - Parameters:
        ///   - x: the horizontal value.
        ///   - y: the vertical value.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The panel's title.
    public var title: String
    /// The horizontal axis's label, with its unit.
    public var xLabel: String
    /// The vertical axis's label, with its unit.
    public var yLabel: String
    /// The lines, drawn in order.
    public var series: [Series]

    /// Creates a chart.
    ///
    /// - Parameters:
    ///   - title: the panel's title.
    ///   - xLabel: the horizontal axis's label, with its unit.
    ///   - yLabel: the vertical axis's label, with its unit.
    ///   - series: the lines.
    public init(title: String, xLabel: String, yLabel: String, series: [Series]) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.series = series
    }

    /// The smallest and largest values of the points, widened to include zero on the
    /// vertical axis and never empty.
    var bounds: (x: ClosedRange<Double>, y: ClosedRange<Double>) {
        let points = series.flatMap(\.points).filter { $0.x.isFinite && $0.y.isFinite }
        func range(_ values: [Double]) -> ClosedRange<Double> {
            guard let low = values.min(), let high = values.max() else { return 0...1 }
            return low == high ? (low - 0.5)...(high + 0.5) : low...high
        }
        return (range(points.map(\.x)), range(points.map(\.y) + [0]))
    }
}
