/// A set of objects by identity with O(1) insert, remove and lookup, listed in ascending
/// `order` and, for equal orders, in the order they were inserted.
///
/// The sorted list is built when first read after a change (O(n log n)) and cached, so a
/// burst of removals costs O(1) each and one sort at the next read: what lets a mode hold
/// tens of thousands of timers, sources or observers. Loop thread only.
///
/// CF keeps these as `CFMutableSet`s of the mode (`_sources0`, `_observers`) plus arrays
/// it sorts on use.
struct Members<Element: AnyObject> {
    private struct Entry {
        let element: Element
        let order: Int
        let sequence: UInt64
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    private var nextSequence: UInt64 = 0
    private var sorted: [Element]? = []

    var isEmpty: Bool { entries.isEmpty }

    func contains(_ element: Element) -> Bool { entries[ObjectIdentifier(element)] != nil }

    /// Adds `element` with `order`; returns false (changing nothing) if it is already in.
    @discardableResult
    mutating func insert(_ element: Element, order: Int = 0) -> Bool {
        // One hash for a new member (the usual case): store, and put back a member found.
        let entry = Entry(element: element, order: order, sequence: nextSequence &+ 1)
        if let existing = entries.updateValue(entry, forKey: ObjectIdentifier(element)) {
            entries[ObjectIdentifier(element)] = existing
            return false
        }
        nextSequence &+= 1
        sorted = nil
        return true
    }

    /// Removes `element`; returns false if it was not in.
    @discardableResult
    mutating func remove(_ element: Element) -> Bool {
        guard entries.removeValue(forKey: ObjectIdentifier(element)) != nil else { return false }
        sorted = nil
        return true
    }

    /// When `element` was inserted, relative to the other members (nil if it is not in).
    func sequence(of element: Element) -> UInt64? { entries[ObjectIdentifier(element)]?.sequence }

    /// The members in no particular order, without building the sorted list.
    var unordered: some Sequence<Element> { entries.values.lazy.map { $0.element } }  // a key path costs a metadata lookup per member

    /// The members by ascending order, then insertion.
    var elements: [Element] {
        mutating get {
            if let sorted { return sorted }
            let list = entries.values
                .sorted { $0.order != $1.order ? $0.order < $1.order : $0.sequence < $1.sequence }
                .map(\.element)
            sorted = list
            return list
        }
    }
}
