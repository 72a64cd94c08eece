/// One drawn row of the task list.
public struct TaskRow: Hashable, Sendable {
    /// The task's identity.
    public let id: Int
    /// The task's title.
    public let title: String
    /// Seconds since creation, or nil when the task is done.
    public let ageSeconds: Int?
    /// Whether this row is selected.
    public let isSelected: Bool

    /// The right-hand column: "created 12 s ago" or "done".
    public var status: String {
        ageSeconds.map { "created \($0) s ago" } ?? "done"
    }
}
