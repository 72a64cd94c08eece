import ExampleSupport
import Foundation

/// The tolerance comparison's result: the same timers without and with tolerance.
public struct ToleranceReport: Codable, Hashable, Sendable {
    /// How many timers.
    public var timers: Int
    /// The run without tolerance.
    public var without: ToleranceComparison.Run
    /// The run with tolerance; nil if the user quit before it.
    public var with: ToleranceComparison.Run?

    /// Creates a report; `with` is nil when the second run did not happen (the user quit).
    public init(timers: Int, without: ToleranceComparison.Run, with: ToleranceComparison.Run?) {
        self.timers = timers
        self.without = without
        self.with = with
    }

    /// The human-readable lines.
    public var lines: [String] {
        func line(_ run: ToleranceComparison.Run) -> String {
            String(format: "  tolerance %.2f s: %.2f s, %d wakeups = %.1f/s, %d fires, late %.2f...%.2f ms",
                   run.tolerance, run.seconds, run.wakeups, run.wakeupsPerSecond, run.fires, run.earliestMs,
                   run.latestMs)
        }
        var lines = ["tolerance comparison: \(counted(timers, "task")), each with its own 1 s timer", line(without)]
        if let with {
            lines.append(line(with))
            if with.wakeupsPerSecond > 0 {
                lines.append(String(format: "  tolerance saves %.0f%% of the wakeups (%.1fx fewer)",
                                    100 * (1 - with.wakeupsPerSecond / without.wakeupsPerSecond),
                                    without.wakeupsPerSecond / with.wakeupsPerSecond))
            }
        }
        return lines
    }
}
