/// The slots of a ``TimerQueue`` whose timers departed: they left the queue while their
/// entries wait in the exact order (``TimerQueue/remove(_:of:)``). One bit per slot.
///
/// Bits rather than a mark in each ``TimerRecord``: the bits of 100k slots fit in 12.5 KB,
/// which stays cached, where their records span 800 KB. Marking a departure (an invalidate)
/// then costs no cache miss in a large queue. A departed slot's record may still hold its
/// timer's address, stale once the queue let the timer go: readers ask this set first.
///
/// Not shareable, like the queue's other stores: touched on the loop's thread only.
struct DepartedSlots {
    private let words = TimerStore<UInt64>()

    /// Makes room for the slots below `count` (called as the queue adds a slot).
    @inline(__always)
    func cover(_ count: Int) {
        while words.count &* 64 < count { words.append(0) }
    }

    /// The words' address, for a closure that asks ``contains(_:in:)`` without counting
    /// references; valid until the next ``cover(_:)``.
    var address: UnsafeMutablePointer<UInt64> { words.base }

    func contains(_ slot: Int32) -> Bool { Self.contains(slot, in: words.base) }

    @inline(__always)
    static func contains(_ slot: Int32, in words: UnsafeMutablePointer<UInt64>) -> Bool {
        words[Int(slot) >> 6] & Self.bit(slot) != 0
    }

    func insert(_ slot: Int32) { words[Int(slot) >> 6] |= Self.bit(slot) }

    func remove(_ slot: Int32) { words[Int(slot) >> 6] &= ~Self.bit(slot) }

    /// Empties the set, keeping its room (every departed entry was dropped).
    func clear() {
        for index in words.indices { words[index] = 0 }
    }

    /// Empties the set and its room (the queue's slots are gone).
    func removeAll() { words.removeAll() }

    private static func bit(_ slot: Int32) -> UInt64 { 1 &<< UInt64(truncatingIfNeeded: slot & 63) }
}
