import Foundation

/// The tasks and the selection, kept by task identity.
public struct TaskBoard: Sendable {
    /// The tasks, oldest first.
    public private(set) var tasks: [TaskItem] = []
    /// The selected task's identity.
    public private(set) var selectedID: Int?
    private var nextID = 1

    /// Creates an empty board.
    public init() {}

    /// Adds an open task created at `now` and selects it.
    public mutating func add(at now: Date) {
        let titles = ["Write the report", "Review the pull request", "Answer the mail", "Plan the sprint",
                      "Fix the flaky test", "Update the docs", "Call the client", "Order lunch"]
        let id = nextID
        nextID += 1
        tasks.append(TaskItem(id: id, title: titles[(id - 1) % titles.count], created: now))
        selectedID = id
    }

    /// Completes the selected task if it is open; returns whether it did.
    @discardableResult
    public mutating func completeSelected(at now: Date) -> Bool {
        guard let index = tasks.firstIndex(where: { $0.id == selectedID }), !tasks[index].isDone else {
            return false
        }
        tasks[index].completed = now
        if let next = tasks.firstIndex(where: { !$0.isDone }) { selectedID = tasks[next].id }
        return true
    }

    /// Moves the selection `delta` rows (negative: up), stopping at the ends.
    public mutating func moveSelection(by delta: Int) {
        guard !tasks.isEmpty else { return }
        let row = tasks.firstIndex { $0.id == selectedID } ?? 0
        selectedID = tasks[min(max(0, row + delta), tasks.count - 1)].id
    }

    /// Whether there are open tasks.
    public var hasOpenTasks: Bool { tasks.contains { !$0.isDone } }

    /// Records one refresh tick for every open task (see ``TaskItem/ticksSeen``).
    public mutating func countTick() {
        for index in tasks.indices where !tasks[index].isDone { tasks[index].ticksSeen += 1 }
    }

    /// How far behind, in seconds, a row counting ticks would be at `now`: the largest
    /// difference between an open task's age from its date and its ticks seen.
    public func tickCountingLag(at now: Date) -> Int {
        tasks.filter { !$0.isDone }.map { $0.age(at: now) - $0.ticksSeen }.max() ?? 0
    }

    /// The list as drawn at `now`: every age computed from dates.
    public func rows(at now: Date) -> [TaskRow] {
        tasks.map { task in
            TaskRow(id: task.id, title: task.title, ageSeconds: task.isDone ? nil : task.age(at: now),
                    isSelected: task.id == selectedID)
        }
    }
}
