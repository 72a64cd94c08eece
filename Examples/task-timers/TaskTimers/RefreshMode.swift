import RunLoopKit

/// Which mode the 1 s refresh timer is added to.
public enum RefreshMode: String, CaseIterable, Codable, Sendable {
    /// The default mode only: the timer stops firing while the loop runs the tracking mode.
    case `default`
    /// The common modes (default and tracking): the timer keeps firing while scrolling.
    case common

    /// The run loop mode to add the timer to.
    public var mode: EVRunLoop.Mode {
        switch self {
        case .default: .default
        case .common: .common
        }
    }
}
