import Foundation

/// Everything one redraw shows: the rows as of one "now", and the running measurements.
public struct CountdownFrame: Sendable {
    /// The strategy that drew it.
    public let strategy: Strategy
    /// The moment every row was computed for.
    public let now: Date
    /// The rows.
    public let rows: [CountdownRow]
    /// The measurements so far.
    public let tracker: SecondTracker
}
