import Foundation

/// Measures the displayed seconds of successive redraws: which seconds were never shown
/// (skipped), which were shown by two redraws in a row (repeated), and how late each new
/// second reached the screen.
public struct SecondTracker: Sendable {
    /// Redraws recorded.
    public private(set) var redraws = 0
    /// Seconds the display jumped over.
    public private(set) var skipped = 0
    /// Redraws that showed the same second as the redraw before.
    public private(set) var repeated = 0
    /// For each redraw that showed a new second (after the first redraw): seconds from the
    /// start of that wall-clock second to the moment it was drawn.
    public private(set) var lags: [Double] = []
    private var lastSecond: Int64?

    /// Creates an empty tracker.
    public init() {}

    /// Records a redraw that computed its rows for `shown` and was drawn at `drawnAt`.
    public mutating func record(shown: Date, drawnAt: Date) {
        let second = DisplayedSecond.of(shown)
        redraws += 1
        defer { lastSecond = second }
        guard let last = lastSecond else { return }
        if second == last {
            repeated += 1
        } else if second > last {
            skipped += Int(second - last - 1)
            lags.append(drawnAt.timeIntervalSince1970 - Double(second))
        }
    }
}
