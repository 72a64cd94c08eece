import Foundation

/// One thing to do, due at a whole wall-clock second (as real due times are: "at 14:30").
public struct TodoItem: Identifiable, Hashable, Sendable {
    /// A stable identity: selection follows it across removals.
    public let id: Int
    /// What to do.
    public let title: String
    /// The due time, in whole seconds since 1970 (UTC).
    public let dueSecond: Int64

    /// Creates an item due at `dueSecond` (whole seconds since 1970).
    public init(id: Int, title: String, dueSecond: Int64) {
        self.id = id
        self.title = title
        self.dueSecond = dueSecond
    }

    /// Whole seconds left at `now`: the due second minus the second `now` falls in, so the
    /// shown value changes exactly when the wall clock enters a new second. Zero or less
    /// means done.
    public func secondsRemaining(at now: Date) -> Int64 {
        dueSecond - DisplayedSecond.of(now)
    }
}
