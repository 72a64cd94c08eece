import ExampleSupport

/// What an interactive or scripted run measured; printed in the summary and encoded for
/// `--json`.
public struct SessionReport: Codable, Hashable, Sendable {
    /// The refresh timer's mode.
    public var refreshMode: RefreshMode
    /// Seconds the session ran, on the loop's monotonic clock.
    public var durationSeconds: Double
    /// Tasks added.
    public var tasksAdded = 0
    /// Tasks completed.
    public var tasksDone = 0
    /// Refresh timer callouts.
    public var refreshTicks = 0
    /// Refresh timers created (a new one after all tasks were done, or after the background).
    public var refreshTimersCreated = 0
    /// Loop wakeups during the session.
    public var wakeups = 0
    /// ``wakeups`` per second of ``durationSeconds``.
    public var wakeupsPerSecond = 0.0
    /// Scrolls.
    public var scrolls = 0
    /// Seconds the loop ran the tracking mode for the scrolls.
    public var trackingSeconds = 0.0
    /// Refresh ticks that fired while tracking.
    public var ticksDuringTracking = 0
    /// Refresh ticks scheduled while tracking that did not fire then.
    public var ticksMissedDuringTracking = 0
    /// The longest time between two refreshes while a refresh timer existed.
    public var longestRefreshGapSeconds = 0.0
    /// Seconds spent in the background (no timers).
    public var backgroundSeconds = 0.0
    /// How far behind a row that counts ticks instead of computing from dates would be at
    /// the end, in seconds (the date-computed rows are always right).
    public var tickCountingLagSeconds = 0
    /// "All done" animations started.
    public var animations = 0
    /// Animation frames drawn.
    public var framesDrawn = 0
    /// Animation frames the display link dropped.
    public var framesDropped = 0

    /// Creates an empty report.
    public init(refreshMode: RefreshMode, durationSeconds: Double = 0) {
        self.refreshMode = refreshMode
        self.durationSeconds = durationSeconds
    }

    /// The human-readable lines.
    public var lines: [String] {
        func f(_ value: Double) -> String { String(format: "%.2f", value) }
        return [
            "session: \(f(durationSeconds)) s, refresh timer in .\(refreshMode.rawValue), "
                + "\(counted(tasksAdded, "task")) added, \(tasksDone) done",
            "  refresh ticks \(refreshTicks) (timers created \(refreshTimersCreated)), "
                + "wakeups \(wakeups) = \(f(wakeupsPerSecond))/s",
            "  scrolling: \(scrolls)x, \(f(trackingSeconds)) s in tracking mode; ticks fired there "
                + "\(ticksDuringTracking), missed \(ticksMissedDuringTracking); "
                + "longest gap between refreshes \(f(longestRefreshGapSeconds)) s",
            "  background: \(f(backgroundSeconds)) s; rows from dates are right, "
                + "a tick-counting row would be \(tickCountingLagSeconds) s behind",
            "  animation: \(counted(animations, "animation")) played, \(counted(framesDrawn, "frame")) drawn, "
                + "\(framesDropped) dropped",
        ]
    }
}

extension SessionReport {
    /// The report with its fractional figures rounded to milliseconds, for a readable JSON.
    func rounded() -> SessionReport {
        var copy = self
        copy.durationSeconds = roundedMillis(durationSeconds)
        copy.wakeupsPerSecond = roundedMillis(wakeupsPerSecond)
        copy.trackingSeconds = roundedMillis(trackingSeconds)
        copy.longestRefreshGapSeconds = roundedMillis(longestRefreshGapSeconds)
        copy.backgroundSeconds = roundedMillis(backgroundSeconds)
        return copy
    }
}
