import Foundation

/// Everything the live screen shows at one moment.
public struct TaskScreenState: Sendable {
    /// The rows as of the last reload (a frozen refresh timer leaves them stale).
    public var rows: [TaskRow]
    /// When the rows were computed.
    public var rowsAt: Date
    /// The refresh timer's mode.
    public var refreshMode: RefreshMode
    /// Whether a refresh timer exists.
    public var hasRefreshTimer: Bool
    /// The scroll's progress (0...1) while the loop runs the tracking mode, else nil.
    public var scrollProgress: Double?
    /// Whether the app is in the background.
    public var isBackground: Bool
    /// The animation bar while the "all done" animation plays, else nil.
    public var celebrationBar: String?
    /// Refresh ticks so far.
    public var ticks: Int
    /// Refresh ticks missed while tracking so far.
    public var ticksMissedDuringTracking: Int
    /// Animation frames drawn so far.
    public var framesDrawn: Int
    /// Animation frames dropped so far.
    public var framesDropped: Int
}
