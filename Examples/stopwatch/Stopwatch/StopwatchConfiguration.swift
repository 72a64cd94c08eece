import Foundation

/// What a ``StopwatchSession`` does and measures.
public struct StopwatchConfiguration: Sendable {
    /// Start timing as soon as the session starts (the default when not interactive).
    public var startsAtOnce: Bool
    /// Actions to perform at given times (`--at`).
    public var script: [ScheduledAction]
    /// The locale of the decimal separator (`--locale`).
    public var locale: Locale
    /// Milliseconds of simulated slow work done once per running second (`--stall`): a
    /// stand-in for a busy main thread, which makes frames drop.
    public var stallMilliseconds: Double
    /// Display updates per second.
    public var framesPerSecond: Double

    /// Creates a configuration.
    public init(
        startsAtOnce: Bool, script: [ScheduledAction] = [], locale: Locale = Locale(identifier: "en_US_POSIX"),
        stallMilliseconds: Double = 0, framesPerSecond: Double = 100
    ) {
        self.startsAtOnce = startsAtOnce
        self.script = script
        self.locale = locale
        self.stallMilliseconds = stallMilliseconds
        self.framesPerSecond = framesPerSecond
    }
}
