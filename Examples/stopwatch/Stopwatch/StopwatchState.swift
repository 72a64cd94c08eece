import RunLoopKit

/// The stopwatch itself: the time shown is always computed from the monotonic instant it
/// was started at, plus what earlier running periods added; nothing is ever counted.
public struct StopwatchState: Sendable, Equatable {
    /// Time from earlier running periods.
    public private(set) var accumulated: Duration = .zero
    /// When the current running period began; nil while stopped.
    public private(set) var startedAt: EVRunLoop.Instant?
    /// The laps taken, as elapsed times.
    public private(set) var laps: [Duration] = []

    /// A stopwatch at zero, stopped.
    public init() {}

    /// Whether it is running.
    public var isRunning: Bool { startedAt != nil }

    /// The elapsed time at `instant` (never negative, never past a stop).
    public func elapsed(at instant: EVRunLoop.Instant) -> Duration {
        guard let startedAt else { return accumulated }
        return accumulated + max(.zero, instant - startedAt)
    }

    /// Starts a running period at `instant`; does nothing when running.
    public mutating func start(at instant: EVRunLoop.Instant) {
        if startedAt == nil { startedAt = instant }
    }

    /// Ends the running period at `instant`; does nothing when stopped.
    public mutating func stop(at instant: EVRunLoop.Instant) {
        accumulated = elapsed(at: instant)
        startedAt = nil
    }

    /// Records a lap at `instant`.
    public mutating func lap(at instant: EVRunLoop.Instant) { laps.append(elapsed(at: instant)) }

    /// Back to zero, stopped, without laps.
    public mutating func reset() { self = StopwatchState() }
}
