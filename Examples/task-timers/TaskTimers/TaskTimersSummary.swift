import ExampleSupport
import Foundation

/// The run's summary: the app session, or the tolerance comparison.
public struct TaskTimersSummary: Codable, Sendable {
    /// Always `"task-timers"`.
    public var example = "task-timers"
    /// The interactive or scripted session, if one ran.
    public var session: SessionReport?
    /// The tolerance comparison, if one ran.
    public var toleranceComparison: ToleranceReport?

    /// Creates a summary.
    public init(session: SessionReport?, toleranceComparison: ToleranceReport?) {
        self.session = session
        self.toleranceComparison = toleranceComparison
    }

    /// The summary as one line of JSON with snake_case keys.
    public func json() throws -> String {
        try SummaryJSON.encode(self, snakeCaseKeys: true)
    }

    /// The human-readable summary.
    public var text: String {
        (["task-timers summary"] + (session?.lines ?? []) + (toleranceComparison?.lines ?? []))
            .joined(separator: "\n")
    }
}
