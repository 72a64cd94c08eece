import Foundation

/// Turns a ``CountdownFrame`` into text: a full screen for a terminal, or one plain line
/// per redraw when the output is not a terminal.
public enum CountdownScreen {
    /// The lines of the live screen; the selected row is drawn in reverse video when
    /// `ansi` is set, and marked with `>` either way.
    public static func lines(for frame: CountdownFrame, ansi: Bool) -> [String] {
        var lines = [
            "todo-countdown  [\(frame.strategy.rawValue)] \(frame.strategy.summary)",
            "now \(clock(frame.now))",
            "",
        ]
        if frame.rows.isEmpty { lines.append("  (nothing left to do)") }
        for row in frame.rows {
            let title = row.title.padding(toLength: 24, withPad: " ", startingAt: 0)
            let status = String(repeating: " ", count: max(0, 6 - row.status.count)) + row.status
            let text = "\(row.isSelected ? ">" : " ") \(title) \(status)"
            lines.append(ansi && row.isSelected ? "\u{1B}[7m\(text)\u{1B}[0m" : text)
        }
        let tracker = frame.tracker
        lines += [
            "",
            "redraws \(tracker.redraws)  skipped \(tracker.skipped)  repeated \(tracker.repeated)",
            "keys: j/k or arrows select, q quit",
        ]
        return lines
    }

    /// One line per redraw for a log: the time and every row, the selected one in brackets.
    public static func plainLine(for frame: CountdownFrame) -> String {
        let rows = frame.rows.map { row in
            row.isSelected ? "[\(row.id): \(row.status)]" : "\(row.id): \(row.status)"
        }
        return "\(frame.strategy.rawValue) \(clock(frame.now))  " + rows.joined(separator: "  ")
    }

    /// `HH:mm:ss.SSS` in the local time zone.
    static func clock(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: date)
    }
}
