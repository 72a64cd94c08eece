import ExampleSupport
import Foundation

/// The whole run's summary: what was counted down and each strategy's measurements.
public struct CountdownSummary: Codable, Sendable {
    /// Always `"todo-countdown"`, so a reader of mixed JSON knows the source.
    public var example = "todo-countdown"
    /// Items in the table at the start.
    public var items: Int
    /// Whether done items were removed.
    public var removeDone: Bool
    /// The selected item's identity at the end, if any.
    public var selectedItem: Int?
    /// One report per strategy run, in run order.
    public var strategies: [StrategyReport]

    /// Creates a summary.
    public init(items: Int, removeDone: Bool, selectedItem: Int?, strategies: [StrategyReport]) {
        self.items = items
        self.removeDone = removeDone
        self.selectedItem = selectedItem
        self.strategies = strategies
    }

    /// The summary as one line of JSON with snake_case keys.
    public func json() throws -> String {
        try SummaryJSON.encode(self, snakeCaseKeys: true)
    }

    /// The human-readable summary.
    public var text: String {
        var lines = ["todo-countdown summary (\(counted(items, "item")) due at +10 s, +20 s, ...)"]
        lines += strategies.map { "  " + $0.line }
        if let poll = strategies.first(where: { $0.strategy == .poll }),
           let aligned = strategies.first(where: { $0.strategy == .aligned }), poll.wakeupsPerSecond > 0 {
            lines.append(String(format: "  aligned wakes %.2fx as often as poll", aligned.wakeupsPerSecond / poll.wakeupsPerSecond))
        }
        if let selectedItem { lines.append("  selected item at the end: #\(selectedItem)") }
        return lines.joined(separator: "\n")
    }
}
