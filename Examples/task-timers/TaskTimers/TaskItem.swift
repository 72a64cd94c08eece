import Foundation

/// One task of the list: when it was created and, once done, when it was completed.
public struct TaskItem: Identifiable, Hashable, Sendable {
    /// A stable identity: the selection follows it.
    public let id: Int
    /// What to do.
    public let title: String
    /// When the task was added: every row's age is computed from this date.
    public let created: Date
    /// When the task was completed, or nil while open.
    public var completed: Date?
    /// Refresh ticks that happened while the task was open: what a row that counts ticks,
    /// instead of computing from dates, would show as its age.
    public var ticksSeen = 0

    /// Creates an open task.
    public init(id: Int, title: String, created: Date) {
        self.id = id
        self.title = title
        self.created = created
    }

    /// Whether the task is done.
    public var isDone: Bool { completed != nil }

    /// Whole seconds since the task was created, at `now`.
    public func age(at now: Date) -> Int {
        max(0, Int(now.timeIntervalSince(created).rounded(.down)))
    }
}
