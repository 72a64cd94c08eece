import ExampleSupport
import Foundation

/// Everything a session measured: printed as a table, or as one JSON object with `--json`.
public struct ClockSummary: Codable, Sendable, Equatable {
    /// Seconds the session ran.
    public var duration: Double
    /// One row per strategy, in the order they ran.
    public var strategies: [StrategyReport]
    /// Wakeups per second of the whole loop (all strategies together).
    public var loopWakeupsPerSecond: Double
    /// Simulated seconds of work per publish.
    public var publishCost: Double
    /// The lead in use at the end, in seconds; nil without `--lead`.
    public var lead: Double?
    /// Mean sub-second phase of the aligned timer's ticks, in seconds.
    public var alignedTickPhaseMean: Double
    /// Standard deviation of those phases, in seconds.
    public var alignedTickPhaseSpread: Double

    /// Creates a summary from its figures.
    public init(
        duration: Double, strategies: [StrategyReport], loopWakeupsPerSecond: Double, publishCost: Double,
        lead: Double?, alignedTickPhaseMean: Double, alignedTickPhaseSpread: Double
    ) {
        self.duration = duration
        self.strategies = strategies
        self.loopWakeupsPerSecond = loopWakeupsPerSecond
        self.publishCost = publishCost
        self.lead = lead
        self.alignedTickPhaseMean = alignedTickPhaseMean
        self.alignedTickPhaseSpread = alignedTickPhaseSpread
    }

    /// The row of `strategy`, if it ran.
    public func report(for strategy: Strategy) -> StrategyReport? {
        strategies.first { $0.strategy == strategy }
    }

    /// The summary as one line of JSON with sorted keys.
    public func json() throws -> String {
        try SummaryJSON.encode(self)
    }

    /// The summary as a table for people.
    public func table() -> String {
        var lines = [
            "strategy            updates  phase error ms      lag ms              wakeups/s",
            "                             median    p99       median    max",
        ]
        for row in strategies {
            lines.append(
                row.strategy.title.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(row.updates).leftPadded(7) + "  "
                    + Self.ms(row.phaseErrorMedianMs) + Self.ms(row.phaseErrorP99Ms)
                    + Self.ms(row.lagMedianMs) + Self.ms(row.lagMaxMs)
                    + String(format: "%9.2f", row.wakeupsPerSecond))
        }
        lines.append(String(format: "ran %.1f s; the loop woke %.2f times per second", duration, loopWakeupsPerSecond))
        lines.append(String(format: "aligned ticks: phase mean %+.3f ms, spread %.3f ms",
                            alignedTickPhaseMean * 1000, alignedTickPhaseSpread * 1000))
        if publishCost > 0 {
            lines.append(String(format: "publish cost %.3f s", publishCost)
                + (lead.map { String(format: "; lead %.4f s", $0) } ?? "; no lead (--lead auto measures one)"))
        }
        return lines.joined(separator: "\n")
    }

    private static func ms(_ value: Double) -> String { String(format: "%9.3f ", value) }
}

extension String {
    /// The string right-aligned in `width` columns.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
