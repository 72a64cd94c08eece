import ExampleSupport
import Foundation
import Glibc

/// Turns display updates into terminal text: on a TTY one line per strategy, redrawn in
/// place with ANSI escapes; otherwise one plain line per update.
public final class ClockScreen {
    /// Whether to redraw in place (stdout is a terminal).
    public let redraws: Bool
    private let strategies: [Strategy]
    private var lines: [Strategy: String] = [:]
    private var drawn = false

    /// Creates a screen for the given strategies.
    public init(strategies: [Strategy], redraws: Bool) {
        self.strategies = strategies
        self.redraws = redraws
    }

    /// The text to write for `update`: the whole block on a TTY, one line otherwise.
    public func text(for update: DisplayUpdate, tickPhases: Samples) -> String {
        var line = update.strategy.title.padding(toLength: 20, withPad: " ", startingAt: 0)
            + Self.clock(update.shownSecond)
            + String(format: "  appeared %+9.3f ms after the second", update.lag * 1000)
        if update.strategy == .aligned {
            let tick = (update.tick.timeIntervalSince1970 - Double(update.shownSecond)) * 1000
            line += String(format: "   tick phase %+.3f ms, mean %+.3f ms, spread %.3f ms",
                           tick, tickPhases.mean * 1000, tickPhases.spread * 1000)
        }
        guard redraws else { return line + "\n" }
        lines[update.strategy] = line
        var text = drawn ? "\u{1B}[\(strategies.count)A" : ""
        drawn = true
        for strategy in strategies {
            let waiting = strategy.title.padding(toLength: 20, withPad: " ", startingAt: 0) + "--:--:--  waiting"
            text += "\r\u{1B}[2K" + (lines[strategy] ?? waiting) + "\n"
        }
        return text
    }

    /// `HH:MM:SS` of a whole second since 1970, in the local time zone.
    public static func clock(_ second: Int64) -> String {
        var time = time_t(second)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
