import Foundation

/// Turns stopwatch events into terminal text: on a TTY one line redrawn in place on every
/// frame; otherwise a plain line per whole second and per action.
public final class StopwatchScreen {
    /// Whether to redraw in place (stdout is a terminal).
    public let redraws: Bool
    private var lastPrintedSecond: Int64 = -1

    /// Creates a screen.
    public init(redraws: Bool) { self.redraws = redraws }

    /// The text to write for `event`, or nil when nothing changes on screen.
    public func text(for event: StopwatchSession.Event, session: StopwatchSession) -> String? {
        let running = session.state.isRunning
        let laps = session.state.laps
        var line = session.display
        line += running ? "  running" : "  stopped"
        if let last = laps.last { line += "   lap \(laps.count) " + session.format.string(last) }
        if redraws {
            let keys = "   [space] start/stop  [l] lap  [r] reset  [q] quit"
            return "\r\u{1B}[2K" + line + keys
        }
        switch event {
        case .ready:
            return "ready  " + line + "\n"
        case .action(let action):
            return action.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0) + line + "\n"
        case .frame:
            let second = session.shown.components.seconds
            guard second != lastPrintedSecond else { return nil }
            lastPrintedSecond = second
            return "       " + line + "\n"
        }
    }
}
