/// The consumer's own module named TraceTimeline.
public enum TraceTimelineName {
    /// This module's name.
    public static let name = "TraceTimeline"
}
