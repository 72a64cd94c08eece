/// The consumer's own module named SVGPlot.
public enum SVGPlotName {
    /// This module's name.
    public static let name = "SVGPlot"
}
