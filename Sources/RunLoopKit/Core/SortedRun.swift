import RunLoopKitPlatform

/// The entries of one ``TimerOrder`` that arrived in order: a ring buffer sorted by rank,
/// appended at the back and taken from the front in O(1), without a sift.
///
/// Repeating timers that share an interval are rescheduled in the order they fire, each
/// later than the one rescheduled before it; timeouts of one length, added or reset as
/// events come, arrive in order too. libev's manual asks its users to keep such timers in a
/// list of their own ("be smart about timeouts"); a ``TimerOrder`` does it by itself and
/// sends only an entry that would not come last to its heap.
///
/// Removing an entry from the middle leaves a hole (its slot set to -1, its key kept, so
/// the keys stay sorted); the front and the back are never holes, and holes are compacted
/// away once they are more than half the run. An entry's position (written into the
/// order's position store on every move) is its run's ``id`` and its index in the ring,
/// encoded by ``position(ofRingIndex:)`` so that it never collides with a heap index or
/// the other run's positions.
///
/// Not shareable: it belongs to one queue, touched on its loop's thread only.
final class SortedRun {
    private var base: UnsafeMutablePointer<HeapEntry>
    /// A power of two.
    private var capacity: Int
    /// The ring index of the front.
    private var head = 0
    /// Entries from the front to the back, holes included.
    private(set) var count = 0
    private var holes = 0
    /// The entry at the back while the run is not empty: ``last`` without the ring's
    /// arithmetic, asked by every push (PROFILING.md, "Tricks and what they earn").
    private var backEntry = HeapEntry(key: 0, slot: -1, tie: 0)
    /// By slot: where each slot's entry sits (heap index, or ``position(ofRingIndex:)``).
    private let positions: TimerStore<Int32>
    /// Which of its order's runs this is (0 or 1), part of its entries' positions.
    let id: Int

    /// Ring indices stay below this (8 GB of entries), so that the run's id fits above them
    /// in a 32-bit position.
    private static let indexLimit = 1 << 29

    init(positions: TimerStore<Int32>, id: Int) {
        self.positions = positions
        self.id = id
        capacity = 8
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// The position store's value for the ring index `index` of this run: -2, -3, … for
    /// run 0, below -2 - 2^30 for run 1 (-1 means "none", and heap indices are zero or more).
    @inline(__always)
    func position(ofRingIndex index: Int) -> Int32 { Int32(truncatingIfNeeded: -2 &- (index | id << 30)) }

    /// The run id and ring index a position of ``position(ofRingIndex:)`` stands for; nil
    /// for a heap index.
    @inline(__always)
    static func location(ofPosition position: Int32) -> (run: Int, ringIndex: Int)? {
        guard position <= -2 else { return nil }
        let code = -2 &- Int(position)
        return (code >> 30, code & (1 << 30 &- 1))
    }

    var isEmpty: Bool { count == 0 }

    /// The earliest entry (never a hole).
    var first: HeapEntry? { count > 0 ? base[head] : nil }

    /// The latest entry (never a hole).
    var last: HeapEntry? { count > 0 ? backEntry : nil }

    /// The ring index of the front.
    var firstRingIndex: Int { head }

    /// The entry (or hole) `offset` places after the front, `offset < count`.
    @inline(__always)
    subscript(offset offset: Int) -> HeapEntry { base[ring(offset)] }

    /// The entry at ring index `index` (a position's).
    subscript(ringIndex index: Int) -> HeapEntry { base[index] }

    @inline(__always)
    private func ring(_ offset: Int) -> Int { (head &+ offset) & (capacity &- 1) }

    @inline(__always)
    private func mark(_ entry: HeapEntry, at index: Int) {
        positions[Int(entry.slot)] = position(ofRingIndex: index)
    }

    /// Whether the entry at ring index `index` is `slot`'s (and not a left-over copy).
    func holds(_ slot: Int32, atRingIndex index: Int) -> Bool {
        index < capacity && (index &- head) & (capacity &- 1) < count && base[index].slot == slot
    }

    /// Appends `entry`, which must not precede ``last``.
    func append(_ entry: HeapEntry) {
        if count == capacity { grow() }
        let index = ring(count)
        base[index] = entry
        backEntry = entry
        count &+= 1
        mark(entry, at: index)
    }

    /// Moves the front entry to the back as `entry` (the front's slot with a new key, which
    /// does not precede ``last``): the fire of a repeating timer that shares its interval
    /// with the timers queued before it. One store where a removal and an append would each
    /// check and move the ends; a full ring needs no room, the front's cell becoming the back.
    @inline(__always)
    func rotateFront(_ entry: HeapEntry) {
        let index = ring(count)
        base[index] = entry
        backEntry = entry
        mark(entry, at: index)
        head = ring(1)
        while base[head].isHole {  // the back is `entry`, never a hole
            head = ring(1)
            count &-= 1
            holes &-= 1
        }
    }

    /// Removes the front entry: a fired timer's, on its way to the back.
    @inline(__always)
    func removeFirst() {
        head = ring(1)
        count &-= 1
        while count > 0, base[head].isHole {
            head = ring(1)
            count &-= 1
            holes &-= 1
        }
    }

    /// Removes the entry at ring index `index`: O(1) at either end, a hole elsewhere.
    func remove(atRingIndex index: Int) {
        if index == head { return removeFirst() }
        base[index].makeHole()
        holes &+= 1
        // The front is not a hole (it was not removed); holes at the back are dropped.
        while count > 0, base[ring(count &- 1)].isHole {
            count &-= 1
            holes &-= 1
        }
        if count > 0 { backEntry = base[ring(count &- 1)] }
        if holes >= 32, holes > count / 2 { compact() }
    }

    func removeAll() {
        head = 0
        count = 0
        holes = 0
    }

    /// The offset of the last entry (or hole) whose key is at or before `limit`; nil if the
    /// front is later. A binary search: holes keep their keys.
    func lastOffset(atOrBefore limit: Int64) -> Int? {
        guard count > 0, base[head].key <= limit else { return nil }
        var (low, high) = (0, count &- 1)  // the answer is in low...high
        while low < high {
            let middle = (low &+ high &+ 1) / 2
            if base[ring(middle)].key <= limit { low = middle } else { high = middle &- 1 }
        }
        return low
    }

    /// Moves the entries together, dropping the holes.
    private func compact() { closeUp(dropping: nil) }

    /// Drops the entries of departed timers (``TimerRecord/isDeparted`` in `records`), their
    /// slots appended to `freed` and their positions set to -1, and the holes.
    func removeDeparted(_ records: TimerStore<TimerRecord>, freeing freed: TimerStore<Int32>) {
        closeUp(dropping: (records, freed))
    }

    /// Moves the entries together in one pass, dropping the holes and, if given, departed
    /// timers' entries.
    private func closeUp(dropping departed: (records: TimerStore<TimerRecord>, freed: TimerStore<Int32>)?) {
        var kept = 0
        for offset in 0..<count {
            let entry = base[ring(offset)]
            guard !entry.isHole else { continue }
            if let departed, departed.records[Int(entry.slot)].isDeparted {
                positions[Int(entry.slot)] = -1
                departed.freed.append(entry.slot)
                continue
            }
            let index = ring(kept)
            base[index] = entry
            mark(entry, at: index)
            kept &+= 1
        }
        count = kept
        holes = 0
        if kept > 0 { backEntry = base[ring(kept &- 1)] }
    }

    /// The entries, holes not counted.
    var entryCount: Int { count &- holes }

    /// Doubles the capacity, the front moving to ring index 0.
    private func grow() {
        require(capacity < Self.indexLimit, "SortedRun: more than \(Self.indexLimit) entries")
        let larger = UnsafeMutablePointer<HeapEntry>.allocate(capacity: capacity * 2)
        for offset in 0..<count {
            let entry = base[ring(offset)]
            larger[offset] = entry
            if !entry.isHole { positions[Int(entry.slot)] = position(ofRingIndex: offset) }
        }
        base.deallocate()
        base = larger
        head = 0
        capacity *= 2
    }
}
