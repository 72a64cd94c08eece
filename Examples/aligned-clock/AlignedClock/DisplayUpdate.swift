import Foundation

/// One moment at which a strategy put a new second on the display.
public struct DisplayUpdate: Sendable, Equatable {
    /// The strategy that drew it.
    public var strategy: Strategy
    /// The whole second (seconds since 1970) the display shows from now on.
    public var shownSecond: Int64
    /// When the timer fired, on the wall clock.
    public var tick: Date
    /// When the value appeared: after the publish work, or at the tick when nothing is published.
    public var appeared: Date

    /// Creates an update.
    public init(strategy: Strategy, shownSecond: Int64, tick: Date, appeared: Date) {
        self.strategy = strategy
        self.shownSecond = shownSecond
        self.tick = tick
        self.appeared = appeared
    }

    /// How long after the start of the shown second the value appeared (negative: early).
    public var lag: Double { appeared.timeIntervalSince1970 - Double(shownSecond) }

    /// The appearance's signed distance to the nearest whole second (negative: before it).
    public var phase: Double {
        let seconds = appeared.timeIntervalSince1970
        return seconds - seconds.rounded()
    }
}
