/// The 4-ary heaps of ``TimerQueue`` (half the depth of a binary heap; libev's shape for its
/// timers): entries ordered by key, then by creation, each moved entry's index written into
/// the queue's index store for that heap. Entries and indices are reached through raw
/// pointers into ``TimerStore``s, so a sift does no uniqueness checks and no reference
/// counting.
enum TimerHeap {
    static let arity = 4

    /// A heap's entries, its index array and the queue's records, as a sift sees them.
    struct Buffers {
        let heap: UnsafeMutablePointer<HeapEntry>
        let count: Int
        /// By slot: where the slot's entry sits in this heap.
        let indices: UnsafeMutablePointer<Int32>
        /// Read only on equal ties outside the tie window (``BySequence``).
        let records: UnsafePointer<TimerRecord>

        @inline(__always)
        func mark(_ slot: Int32, _ index: Int) {
            indices[Int(slot)] = Int32(truncatingIfNeeded: index)
        }
    }

    /// An order of entries: (key, tie) alone, or with the timers' sequences for equal ties.
    protocol Order {
        static func precedes(_ a: HeapEntry, _ b: HeapEntry, _ buffers: Buffers) -> Bool
    }

    /// By rank: exact while every tie is (``TieWindow/isExact``); one compare, no branch.
    enum ByRank: Order {
        @inline(__always)
        static func precedes(_ a: HeapEntry, _ b: HeapEntry, _ buffers: Buffers) -> Bool { a.rank < b.rank }
    }

    /// By key, then tie, then (for equal ties, outside the tie window) the timers' sequences.
    enum BySequence: Order {
        @inline(__always)
        static func precedes(_ a: HeapEntry, _ b: HeapEntry, _ buffers: Buffers) -> Bool {
            precedes(a, b, records: buffers.records)
        }

        /// The order itself, for entries of the queue whose records are `records`.
        @inline(__always)
        static func precedes(_ a: HeapEntry, _ b: HeapEntry, records: UnsafePointer<TimerRecord>) -> Bool {
            if a.key != b.key { return a.key < b.key }
            if a.tie != b.tie { return a.tie < b.tie }
            return sequenceBefore(a, b, records)
        }

        @inline(never)
        private static func sequenceBefore(_ a: HeapEntry, _ b: HeapEntry, _ records: UnsafePointer<TimerRecord>) -> Bool {
            records[Int(a.slot)].sequence < records[Int(b.slot)].sequence
        }
    }

    /// Raw access to `heap`, `indices` and `records`.
    @inline(__always)
    static func buffers(
        _ heap: TimerStore<HeapEntry>, _ indices: TimerStore<Int32>, _ records: TimerStore<TimerRecord>
    ) -> Buffers {
        Buffers(heap: heap.base, count: heap.count, indices: indices.base, records: UnsafePointer(records.base))
    }

    static func push(
        _ heap: TimerStore<HeapEntry>, _ entry: HeapEntry, _ indices: TimerStore<Int32>,
        _ records: TimerStore<TimerRecord>, exactTies: Bool
    ) {
        heap.append(entry)
        let buffers = buffers(heap, indices, records)
        if exactTies {
            siftUp(buffers, from: buffers.count - 1, ByRank.self)
        } else {
            siftUp(buffers, from: buffers.count - 1, BySequence.self)
        }
    }

    static func remove(
        _ heap: TimerStore<HeapEntry>, at index: Int, _ indices: TimerStore<Int32>,
        _ records: TimerStore<TimerRecord>, exactTies: Bool
    ) {
        let last = heap.removeLast()
        guard index < heap.count else { return }
        heap[index] = last
        let buffers = buffers(heap, indices, records)
        buffers.mark(last.slot, index)
        if exactTies { restore(buffers, at: index, ByRank.self) } else { restore(buffers, at: index, BySequence.self) }
    }

    /// Drops the entries of departed timers (``TimerRecord/isDeparted``), their slots
    /// appended to `freed` and their positions set to -1, and makes a heap of the others in
    /// O(n): moved together, then sifted down from the last parent up (Floyd's), every
    /// position written.
    static func removeDeparted(
        _ heap: TimerStore<HeapEntry>, _ indices: TimerStore<Int32>, _ records: TimerStore<TimerRecord>,
        freed: TimerStore<Int32>, exactTies: Bool
    ) {
        let buffers = buffers(heap, indices, records)
        var kept = 0
        for index in 0..<buffers.count {
            let entry = buffers.heap[index]
            if buffers.records[Int(entry.slot)].isDeparted {
                buffers.indices[Int(entry.slot)] = -1
                freed.append(entry.slot)
                continue
            }
            buffers.heap[kept] = entry
            buffers.mark(entry.slot, kept)
            kept &+= 1
        }
        heap.removeLast(heap.count - kept)
        guard kept > 1 else { return }
        let rebuilt = Buffers(heap: buffers.heap, count: kept, indices: buffers.indices, records: buffers.records)
        for parent in stride(from: (kept - 2) / arity, through: 0, by: -1) {
            if exactTies { siftDown(rebuilt, from: parent, ByRank.self) } else { siftDown(rebuilt, from: parent, BySequence.self) }
        }
    }

    /// Sets the key of the entry at `index` and moves the entry to its place.
    static func rekey(
        _ heap: TimerStore<HeapEntry>, at index: Int, to key: Int64, _ indices: TimerStore<Int32>,
        _ records: TimerStore<TimerRecord>, exactTies: Bool
    ) {
        let buffers = buffers(heap, indices, records)
        let old = buffers.heap[index].key
        buffers.heap[index].key = key
        // A later date (every repeating timer's reschedule) can only move down, usually far.
        switch (key >= old, exactTies) {
        case (true, true): sinkToLeaf(buffers, from: index, ByRank.self)
        case (true, false): sinkToLeaf(buffers, from: index, BySequence.self)
        case (false, true): restore(buffers, at: index, ByRank.self)
        case (false, false): restore(buffers, at: index, BySequence.self)
        }
    }

    @inline(__always)
    static func restore<O: Order>(_ buffers: Buffers, at index: Int, _ order: O.Type) {
        if index > 0, O.precedes(buffers.heap[index], buffers.heap[(index &- 1) / arity], buffers) {
            siftUp(buffers, from: index, order)
        } else {
            siftDown(buffers, from: index, order)
        }
    }

    static func siftUp<O: Order>(_ buffers: Buffers, from start: Int, _ order: O.Type) {
        let heap = buffers.heap
        var index = start
        let entry = heap[index]
        while index > 0 {
            let parent = (index &- 1) / arity
            guard O.precedes(entry, heap[parent], buffers) else { break }
            heap[index] = heap[parent]
            buffers.mark(heap[index].slot, index)
            index = parent
        }
        heap[index] = entry
        buffers.mark(entry.slot, index)
    }

    /// Moves the entry at `start`, whose key grew, down to its place the bottom-up way
    /// (Floyd's): the hole follows the earliest child to a leaf without comparing with the
    /// entry, then the entry rises from there. A rescheduled timer, later than most others,
    /// rises at most a level or two, so this makes three comparisons per level instead of
    /// four, and no level's exit branch to mispredict.
    static func sinkToLeaf<O: Order>(_ buffers: Buffers, from start: Int, _ order: O.Type) {
        let heap = buffers.heap
        let count = buffers.count
        var index = start
        let entry = heap[index]
        while true {
            let first = arity &* index &+ 1
            guard first < count else { break }
            let (child, offset) = earliestChild(heap, first: first, count: count, buffers, order)
            heap[index] = child
            buffers.mark(child.slot, index)
            index = first &+ offset
        }
        // The hole is a leaf; the entry rises from it, never above `start` (its ancestors
        // there precede its old key, so they precede the new one). The same climb as
        // `siftUp`, written out: calling it, bounded by `start`, costs more instructions per
        // repeating fire on the heap path (PROFILING.md, "Tricks and what they earn").
        while index > start {
            let parent = (index &- 1) / arity
            guard O.precedes(entry, heap[parent], buffers) else { break }
            heap[index] = heap[parent]
            buffers.mark(heap[index].slot, index)
            index = parent
        }
        heap[index] = entry
        buffers.mark(entry.slot, index)
    }

    /// The earliest of the children starting at `first` and its offset from `first`; a node
    /// with all four children (every level but the last) compares them in pairs, without
    /// branches, the entries kept in registers.
    @inline(__always)
    private static func earliestChild<O: Order>(
        _ heap: UnsafeMutablePointer<HeapEntry>, first: Int, count: Int, _ buffers: Buffers, _ order: O.Type
    ) -> (HeapEntry, Int) {
        if first &+ 3 < count {
            let children = heap + first
            let (e0, e1, e2, e3) = (children[0], children[1], children[2], children[3])
            let (a, aOffset) = O.precedes(e1, e0, buffers) ? (e1, 1) : (e0, 0)
            let (b, bOffset) = O.precedes(e3, e2, buffers) ? (e3, 3) : (e2, 2)
            return O.precedes(b, a, buffers) ? (b, bOffset) : (a, aOffset)
        }
        var (child, offset) = (heap[first], 0)
        var other = 1
        while first &+ other < count {
            let candidate = heap[first &+ other]
            if O.precedes(candidate, child, buffers) { (child, offset) = (candidate, other) }
            other &+= 1
        }
        return (child, offset)
    }

    static func siftDown<O: Order>(_ buffers: Buffers, from start: Int, _ order: O.Type) {
        let heap = buffers.heap
        let count = buffers.count
        var index = start
        let entry = heap[index]
        while true {
            let first = arity &* index &+ 1
            guard first < count else { break }
            let (child, offset) = earliestChild(heap, first: first, count: count, buffers, order)
            guard O.precedes(child, entry, buffers) else { break }
            heap[index] = child
            buffers.mark(child.slot, index)
            index = first &+ offset
        }
        heap[index] = entry
        buffers.mark(entry.slot, index)
    }
}
