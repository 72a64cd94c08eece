/// Something the user does to the stopwatch: a key when interactive, a flag when not.
public enum Action: String, CaseIterable, Codable, Sendable {
    /// Starts (or resumes) timing.
    case start
    /// Stops (pauses) timing; the shown time stays.
    case stop
    /// Starts when stopped, stops when running: the space bar.
    case toggle
    /// Records the current time as a lap.
    case lap
    /// Stops and sets the time back to zero, forgetting the laps.
    case reset
    /// Ends the program (the summary is still printed).
    case quit

    /// The action of a key: space, `l`, `r`, `q`; nil for any other byte.
    public init?(key: UInt8) {
        switch key {
        case UInt8(ascii: " "): self = .toggle
        case UInt8(ascii: "l"), UInt8(ascii: "L"): self = .lap
        case UInt8(ascii: "r"), UInt8(ascii: "R"): self = .reset
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): self = .quit
        default: return nil
        }
    }
}

/// An action to perform a number of seconds after the program started (`--at 1.5:lap`).
public struct ScheduledAction: Sendable, Equatable {
    /// Seconds after the start of the session.
    public var delay: Double
    /// What to do then.
    public var action: Action

    /// Creates a scheduled action.
    public init(delay: Double, action: Action) {
        self.delay = delay
        self.action = action
    }

    /// Parses `<seconds>:<action>`, for example `2.5:lap`; nil when malformed.
    public init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let delay = Double(parts[0]), delay.isFinite, delay >= 0,
              let action = Action(rawValue: String(parts[1]))
        else { return nil }
        self.init(delay: delay, action: action)
    }
}
