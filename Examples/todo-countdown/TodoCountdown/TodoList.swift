import Foundation

/// The rows of the countdown table and which one is selected.
///
/// The selection is kept by item identity, not by row number, so a full redraw — even one
/// that removes done items above the selected row — leaves the same item selected.
public struct TodoList: Sendable {
    /// The items, in due order.
    public private(set) var items: [TodoItem]
    /// The selected item's identity, or nil when nothing is selected.
    public private(set) var selectedID: Int?
    /// Whether items are removed once due (otherwise they show "done").
    public let removesDone: Bool

    /// Creates a list; the first item is selected.
    public init(items: [TodoItem], removesDone: Bool) {
        self.items = items
        self.removesDone = removesDone
        selectedID = items.first?.id
    }

    /// `count` sample items due at the first whole second after `start` plus 10 s, 20 s, ….
    public static func sample(count: Int, start: Date, removesDone: Bool) -> TodoList {
        let titles = ["Water the plants", "Call the bank", "Stand-up meeting", "Pick up the parcel",
                      "Pay the rent", "Book the flights", "Reply to Sam", "Renew the passport"]
        let base = DisplayedSecond.of(start) + 1
        let items = (0..<max(0, count)).map { index in
            let title = titles[index % titles.count]
                + (index < titles.count ? "" : " (\(index / titles.count + 1))")
            return TodoItem(id: index + 1, title: title, dueSecond: base + Int64(10 * (index + 1)))
        }
        return TodoList(items: items, removesDone: removesDone)
    }

    /// The row number (from 0) of the selected item.
    public var selectedRow: Int? {
        items.firstIndex { $0.id == selectedID }
    }

    /// Selects the item on row `row` (from 0), clamped to the rows there are.
    public mutating func select(row: Int) {
        guard !items.isEmpty else { return }
        selectedID = items[min(max(0, row), items.count - 1)].id
    }

    /// Moves the selection `delta` rows down (negative: up), stopping at the ends.
    public mutating func moveSelection(by delta: Int) {
        select(row: (selectedRow ?? 0) + delta)
    }

    /// Removes the items due at `now` when ``removesDone`` is set. If the selected item is
    /// removed, the item that takes its row is selected (or the last one).
    public mutating func removeDone(at now: Date) {
        guard removesDone else { return }
        let oldRow = selectedRow
        items.removeAll { $0.secondsRemaining(at: now) <= 0 }
        if let oldRow, selectedRow == nil {
            selectedID = items.isEmpty ? nil : items[min(oldRow, items.count - 1)].id
        }
    }

    /// The table as drawn at `now`.
    public func rows(at now: Date) -> [CountdownRow] {
        items.map { item in
            let left = item.secondsRemaining(at: now)
            return CountdownRow(id: item.id, title: item.title, secondsRemaining: left > 0 ? left : nil,
                                isSelected: item.id == selectedID)
        }
    }
}
