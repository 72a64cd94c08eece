import Foundation

/// Turns each pass into terminal text: on a TTY a table of the pass's callouts redrawn in
/// place; otherwise one plain line per pass.
public final class WakeDateScreen {
    /// Whether to redraw in place (stdout is a terminal).
    public let redraws: Bool
    private var drawnLines = 0

    /// Creates a screen.
    public init(redraws: Bool) { self.redraws = redraws }

    /// The text to write for `pass`.
    public func text(for pass: PassRecord) -> String {
        let kind = pass.isSlow ? "slow" : "plain"
        let notes = (pass.registered ? "; observer registered lazily" : "")
            + (pass.ranNested ? "; block ran the modal mode nested" : "")
        guard redraws else {
            let stale = pass.afterSlow.first.map { String(format: "; after the slow callout wakeDate is %.3f ms stale", $0.staleness * 1000) } ?? ""
            return "pass \(pass.index) (\(kind)): "
                + String(format: "Date() spread %.1f µs, observer spread %.1f µs, wakeDate spread %.1f µs",
                         pass.dateSpread * 1e6, pass.observedSpread * 1e6, pass.wakeDateSpread * 1e6)
                + stale + notes + "\n"
        }
        var lines = ["pass \(pass.index) (\(kind))\(notes)",
                     "callout      Date() - wakeDate   observer - wakeDate"]
        for (index, reading) in pass.readings.enumerated() {
            var line = reading.callout.padding(toLength: 10, withPad: " ", startingAt: 0)
                + String(format: "%15.1f µs %17.1f µs", reading.staleness * 1e6, reading.observerOffset * 1e6)
            if index == pass.slowIndex { line += "   <- slow callout" }
            lines.append(line)
        }
        var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)A" : ""
        for line in lines { text += "\r\u{1B}[2K" + line + "\n" }
        for _ in lines.count..<max(lines.count, drawnLines) { text += "\r\u{1B}[2K\n" }
        drawnLines = max(lines.count, drawnLines)
        return text
    }
}
