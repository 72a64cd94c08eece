/// Turns a ``TaskScreenState`` into the lines of the live terminal screen.
public enum TaskScreen {
    /// The screen's lines; the selected row is in reverse video when `ansi` is set and
    /// marked with `>` either way.
    public static func lines(for state: TaskScreenState, ansi: Bool) -> [String] {
        var lines = ["task-timers  refresh: 1 s timer, tolerance 0.1 s, in .\(state.refreshMode.rawValue) mode", ""]
        if state.rows.isEmpty { lines.append("  (no tasks: press a to add one)") }
        for row in state.rows {
            let title = row.title.padding(toLength: 26, withPad: " ", startingAt: 0)
            let text = "\(row.isSelected ? ">" : " ") \(title) \(row.status)"
            lines.append(ansi && row.isSelected ? "\u{1B}[7m\(text)\u{1B}[0m" : text)
        }
        lines.append("")
        if let progress = state.scrollProgress {
            let filled = Int((progress * 20).rounded())
            lines.append("SCROLLING (tracking mode) [" + String(repeating: "#", count: filled)
                + String(repeating: ".", count: 20 - filled) + "]")
        } else if state.isBackground {
            lines.append("IN BACKGROUND: timers stopped; press b to come back")
        } else if let bar = state.celebrationBar {
            lines.append("ALL DONE! [\(bar)]")
        } else {
            lines.append(state.hasRefreshTimer ? "refresh timer running" : "no refresh timer")
        }
        lines += [
            "ticks \(state.ticks)  missed while tracking \(state.ticksMissedDuringTracking)  "
                + "frames \(state.framesDrawn) (dropped \(state.framesDropped))",
            "keys: a add  d done  j/k or arrows select  s scroll  b background  q quit",
        ]
        return lines
    }
}
