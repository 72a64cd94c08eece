/// One order of a ``TimerQueue``'s entries (by fire instant, or by the end of the
/// tolerance): a ``SortedRun`` for the entries that arrive in order, and a 4-ary heap
/// (``TimerHeap``) for the others. An entry goes to the run when it does not precede the
/// run's last entry, so a repeating timer that shares its interval with the timers fired
/// before it is rescheduled in O(1), where the heap would sink it to a leaf; its earliest
/// entry is the earlier of the heap's top and the run's front.
///
/// Each entry's position (a heap index, or a run position) is written into the queue's
/// position store for this order, by slot.
struct TimerOrder {
    let heap = TimerStore<HeapEntry>(childrenInOneLine: true)
    let run: SortedRun
    /// By slot: where the slot's entry sits in this order (shared with the queue's other
    /// order of the same key, as an entry is in one of them).
    let positions: TimerStore<Int32>
    /// The queue's records (read for ties outside the tie window).
    let records: TimerStore<TimerRecord>

    init(positions: TimerStore<Int32>, records: TimerStore<TimerRecord>) {
        self.positions = positions
        self.records = records
        run = SortedRun(positions: positions)
    }

    var isEmpty: Bool { heap.isEmpty && run.isEmpty }

    /// The earliest entry.
    var first: HeapEntry? {
        @inline(__always) get {
            guard let front = run.first else { return heap.first }
            guard let top = heap.first else { return front }
            return precedes(top, front) ? top : front
        }
    }

    /// Whether the entry at `position` is `slot`'s.
    func holds(_ slot: Int32, at position: Int32) -> Bool {
        if let ringIndex = SortedRun.ringIndex(ofPosition: position) { return run.holds(slot, atRingIndex: ringIndex) }
        return position >= 0 && Int(position) < heap.count && heap[Int(position)].slot == slot
    }

    /// The position of `slot`'s entry, read without the position store when it is the
    /// earliest of the run or of the heap (a timer that just fired).
    @inline(__always)
    func position(of slot: Int32) -> Int32 {
        if let front = run.first, front.slot == slot { return SortedRun.position(ofRingIndex: run.firstRingIndex) }
        if let top = heap.first, top.slot == slot { return 0 }
        return positions[Int(slot)]
    }

    func push(_ entry: HeapEntry, exactTies: Bool) {
        if fitsRun(entry, exactTies: exactTies) {
            run.append(entry)
        } else {
            TimerHeap.push(heap, entry, positions, records, exactTies: exactTies)
        }
    }

    /// Removes the entry at `position` (the caller forgets the slot's position).
    func remove(at position: Int32, exactTies: Bool) {
        if let ringIndex = SortedRun.ringIndex(ofPosition: position) {
            run.remove(atRingIndex: ringIndex)
        } else {
            TimerHeap.remove(heap, at: Int(position), positions, records, exactTies: exactTies)
        }
    }

    /// Gives the entry at `position` the key `key` and moves it to its place: to the back of
    /// the run if it fits there, within the heap otherwise.
    func rekey(at position: Int32, to key: Int64, exactTies: Bool) {
        if let ringIndex = SortedRun.ringIndex(ofPosition: position) {
            var entry = run[ringIndex: ringIndex]
            entry.key = key
            // The front (a timer that just fired), due again no earlier than the back: it
            // moves there in one step (``SortedRun/rotateFront(_:)``; fewer instructions per
            // fire: PROFILING.md, "Tricks and what they earn").
            if ringIndex == run.firstRingIndex, run.count > 1, fitsRun(entry, exactTies: exactTies) {
                run.rotateFront(entry)
                return
            }
            run.remove(atRingIndex: ringIndex)
            push(entry, exactTies: exactTies)
            return
        }
        let index = Int(position)
        var entry = heap[index]
        let later = key >= entry.key
        entry.key = key
        if later, fitsRun(entry, exactTies: exactTies) {
            TimerHeap.remove(heap, at: index, positions, records, exactTies: exactTies)
            run.append(entry)
        } else {
            TimerHeap.rekey(heap, at: index, to: key, positions, records, exactTies: exactTies)
        }
    }

    func removeAll() {
        heap.removeAll()
        run.removeAll()
    }

    /// The entries, in the run and the heap.
    var count: Int { heap.count &+ run.entryCount }

    /// Drops the entries of departed timers (their slots appended to `freed`, their positions
    /// set to -1): O(n), the heap rebuilt and the run closed up.
    func removeDeparted(freeing freed: TimerStore<Int32>, exactTies: Bool) {
        run.removeDeparted(records, freeing: freed)
        TimerHeap.removeDeparted(heap, positions, records, freed: freed, exactTies: exactTies)
    }

    /// Calls `body` with the slot of every entry, in no particular order.
    func forEachSlot(_ body: (Int32) -> Void) {
        for index in heap.indices { body(heap[index].slot) }
        for offset in 0..<run.count where !run[offset: offset].isHole { body(run[offset: offset].slot) }
    }

    // MARK: Queries

    /// The smallest key among entries whose slot passes `accept`; `.max` if none. The heap's
    /// top and the run's front answer unless their timers fail (only inside a nested run).
    func earliestKey(where accept: (Int32) -> Bool) -> Int64 {
        var best = Int64.max
        for offset in 0..<run.count {
            let entry = run[offset: offset]
            if !entry.isHole, accept(entry.slot) {
                best = entry.key
                break
            }
        }
        guard let top = heap.first, top.key < best else { return best }
        if accept(top.slot) { return top.key }
        var stack = [0]
        while let index = stack.popLast() {
            let entry = heap[index]
            guard entry.key < best else { continue }
            if accept(entry.slot) {
                best = entry.key
                continue
            }
            stack.append(contentsOf: children(of: index))
        }
        return best
    }

    /// The largest key at or before `limit` among entries whose slot passes `accept` (a
    /// walk of the heap's entries at or before `limit`, the timers the coming wake serves
    /// anyway; the run's are searched from its last one at or before `limit`).
    func latestKey(atOrBefore limit: Int64, where accept: (Int32) -> Bool) -> Int64? {
        var best: Int64?
        if let last = run.lastOffset(atOrBefore: limit) {
            for offset in stride(from: last, through: 0, by: -1) {
                let entry = run[offset: offset]
                if !entry.isHole, accept(entry.slot) {
                    best = entry.key
                    break
                }
            }
        }
        guard let top = heap.first, top.key <= limit else { return best }
        var stack = [0]
        while let index = stack.popLast() {
            let entry = heap[index]
            guard entry.key <= limit else { continue }
            if accept(entry.slot), entry.key > best ?? .min { best = entry.key }
            stack.append(contentsOf: children(of: index))
        }
        return best
    }

    /// The earliest entry due by `now` whose slot passes `accept`. The heap's top and the
    /// run's front answer unless they fail, when the due entries after them are visited.
    func earliest(dueBy now: Int64, where accept: (Int32) -> Bool) -> HeapEntry? {
        var fromRun: HeapEntry?
        for offset in 0..<run.count {
            let entry = run[offset: offset]
            guard entry.key <= now else { break }
            if !entry.isHole, accept(entry.slot) {
                fromRun = entry
                break
            }
        }
        guard let top = heap.first, top.key <= now else { return fromRun }
        var best = fromRun
        if accept(top.slot) { return best.map { precedes($0, top) ? $0 : top } ?? top }
        var stack = [0]
        while let index = stack.popLast() {
            let entry = heap[index]
            guard entry.key <= now, best.map({ precedes(entry, $0) }) ?? true else { continue }
            if accept(entry.slot) {
                best = entry
                continue
            }
            stack.append(contentsOf: children(of: index))
        }
        return best
    }

    /// By key, then by creation (the heaps' order, exact in every case).
    func precedes(_ a: HeapEntry, _ b: HeapEntry) -> Bool {
        TimerHeap.BySequence.precedes(a, b, records: UnsafePointer(records.base))
    }

    /// Whether `entry` may go to the back of the run: it does not precede the run's last.
    @inline(__always)
    private func fitsRun(_ entry: HeapEntry, exactTies: Bool) -> Bool {
        guard let last = run.last else { return true }
        return exactTies ? entry.rank >= last.rank : !precedes(entry, last)
    }

    /// The children of `index` in the heap.
    private func children(of index: Int) -> Range<Int> {
        let first = TimerHeap.arity * index + 1
        return min(first, heap.count)..<min(first + TimerHeap.arity, heap.count)
    }
}
