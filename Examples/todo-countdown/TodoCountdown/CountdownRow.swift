/// One drawn row of the countdown table.
public struct CountdownRow: Hashable, Sendable {
    /// The item's identity.
    public let id: Int
    /// The item's title.
    public let title: String
    /// Whole seconds left, or nil when the item is done.
    public let secondsRemaining: Int64?
    /// Whether this row is the selected one.
    public let isSelected: Bool

    /// The right-hand column: "27 s" or "done".
    public var status: String {
        secondsRemaining.map { "\($0) s" } ?? "done"
    }
}
