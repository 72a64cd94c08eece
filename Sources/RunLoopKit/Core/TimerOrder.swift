/// One order of a ``TimerQueue``'s entries (by fire instant, or by the end of the
/// tolerance): two ``SortedRun``s for the entries that arrive in order, and a 4-ary heap
/// (``TimerHeap``) for the others. An entry goes to the first run whose last entry it
/// does not precede, so a repeating timer that shares its interval with the timers fired
/// before it is rescheduled in O(1), where the heap would sink it to a leaf; its earliest
/// entry is the earliest of the heap's top and the runs' fronts.
///
/// Why two runs: a loop behind its timers reschedules each to the first grid point after
/// its callout, so the timers of one pass come back in order among themselves but may
/// precede the ones not yet due, at the back of the first run; the second run takes them
/// in order, where one run would send them to the heap (PROFILING.md, "Tricks and what
/// they earn").
///
/// Each entry's position (a heap index, or a run and ring position) is written into the
/// queue's position store for this order, by slot.
struct TimerOrder {
    let heap = TimerStore<HeapEntry>(childrenInOneLine: true)
    let run: SortedRun
    let secondRun: SortedRun
    /// By slot: where the slot's entry sits in this order (shared with the queue's other
    /// order of the same key, as an entry is in one of them).
    let positions: TimerStore<Int32>
    /// The queue's records (read for ties outside the tie window).
    let records: TimerStore<TimerRecord>

    init(positions: TimerStore<Int32>, records: TimerStore<TimerRecord>) {
        self.positions = positions
        self.records = records
        run = SortedRun(positions: positions, id: 0)
        secondRun = SortedRun(positions: positions, id: 1)
    }

    /// The run whose ``SortedRun/id`` is `id` (a copy of its reference: a walk over both
    /// takes ``forEachRun(_:)``).
    @inline(__always)
    func run(withID id: Int) -> SortedRun { id == 0 ? run : secondRun }

    /// Calls `body` with the first run, then the second. (Each passed, not picked by id: a
    /// run picked is a copy of its reference, retained and released per pick.)
    @inline(__always)
    private func forEachRun(_ body: (SortedRun) -> Void) {
        body(run)
        body(secondRun)
    }

    var isEmpty: Bool { heap.isEmpty && run.isEmpty && secondRun.isEmpty }

    /// The earliest entry.
    var first: HeapEntry? {
        @inline(__always) get {
            var best = run.first
            if let front = secondRun.first, best.map({ precedes(front, $0) }) ?? true { best = front }
            if let top = heap.first, best.map({ precedes(top, $0) }) ?? true { best = top }
            return best
        }
    }

    /// Whether the entry at `position` is `slot`'s.
    func holds(_ slot: Int32, at position: Int32) -> Bool {
        if let (id, ringIndex) = SortedRun.location(ofPosition: position) {
            return run(withID: id).holds(slot, atRingIndex: ringIndex)
        }
        return position >= 0 && Int(position) < heap.count && heap[Int(position)].slot == slot
    }

    /// The position of `slot`'s entry, read without the position store when it is the
    /// earliest of a run or of the heap (a timer that just fired).
    @inline(__always)
    func position(of slot: Int32) -> Int32 {
        if let front = run.first, front.slot == slot { return run.position(ofRingIndex: run.firstRingIndex) }
        if let top = heap.first, top.slot == slot { return 0 }
        if let front = secondRun.first, front.slot == slot {
            return secondRun.position(ofRingIndex: secondRun.firstRingIndex)
        }
        return positions[Int(slot)]
    }

    /// Queues `entry`: at the back of the first run it fits, in the heap otherwise.
    // Inlined by hand: fewer instructions per create + add, none more per fire
    // (PROFILING.md, "Tricks and what they earn").
    @inline(__always)
    func push(_ entry: HeapEntry, exactTies: Bool) {
        switch fittingRunID(for: entry, exactTies: exactTies) {
        case 0: run.append(entry)
        case 1: secondRun.append(entry)
        default: TimerHeap.push(heap, entry, positions, records, exactTies: exactTies)
        }
    }

    /// Removes the entry at `position` (the caller forgets the slot's position).
    func remove(at position: Int32, exactTies: Bool) {
        if let (id, ringIndex) = SortedRun.location(ofPosition: position) {
            if id == 0 { run.remove(atRingIndex: ringIndex) } else { secondRun.remove(atRingIndex: ringIndex) }
        } else {
            TimerHeap.remove(heap, at: Int(position), positions, records, exactTies: exactTies)
        }
    }

    /// Gives the entry at `position` the key `key` and moves it to its place: to the back of
    /// the first run it fits, within the heap otherwise.
    func rekey(at position: Int32, to key: Int64, exactTies: Bool) {
        if let (id, ringIndex) = SortedRun.location(ofPosition: position) {
            if id == 0 {
                rekey(in: run, id: 0, at: ringIndex, to: key, exactTies: exactTies)
            } else {
                rekey(in: secondRun, id: 1, at: ringIndex, to: key, exactTies: exactTies)
            }
            return
        }
        let index = Int(position)
        var entry = heap[index]
        let later = key >= entry.key
        entry.key = key
        let target = later ? fittingRunID(for: entry, exactTies: exactTies) : -1
        guard target >= 0 else {
            TimerHeap.rekey(heap, at: index, to: key, positions, records, exactTies: exactTies)
            return
        }
        TimerHeap.remove(heap, at: index, positions, records, exactTies: exactTies)
        if target == 0 { run.append(entry) } else { secondRun.append(entry) }
    }

    /// ``rekey(at:to:exactTies:)`` of the entry at `ringIndex` of `source`, whose id is `id`.
    @inline(__always)
    private func rekey(in source: SortedRun, id: Int, at ringIndex: Int, to key: Int64, exactTies: Bool) {
        var entry = source[ringIndex: ringIndex]
        entry.key = key
        // The front (a timer that just fired), due again no earlier than the back of the
        // run that takes it, its own: it moves there in one step
        // (``SortedRun/rotateFront(_:)``; fewer instructions per fire: PROFILING.md,
        // "Tricks and what they earn").
        if ringIndex == source.firstRingIndex, source.count > 1, fittingRunID(for: entry, exactTies: exactTies) == id {
            source.rotateFront(entry)
            return
        }
        source.remove(atRingIndex: ringIndex)
        push(entry, exactTies: exactTies)
    }

    func removeAll() {
        heap.removeAll()
        run.removeAll()
        secondRun.removeAll()
    }

    /// The entries, in the runs and the heap.
    var count: Int { heap.count &+ run.entryCount &+ secondRun.entryCount }

    /// Drops the entries of departed timers (their slots appended to `freed`, their positions
    /// set to -1): O(n), the heap rebuilt and the runs closed up.
    func removeDeparted(freeing freed: TimerStore<Int32>, exactTies: Bool) {
        run.removeDeparted(records, freeing: freed)
        secondRun.removeDeparted(records, freeing: freed)
        TimerHeap.removeDeparted(heap, positions, records, freed: freed, exactTies: exactTies)
    }

    /// Calls `body` with the slot of every entry, in no particular order.
    func forEachSlot(_ body: (Int32) -> Void) {
        for index in heap.indices { body(heap[index].slot) }
        forEachRun { run in
            for offset in 0..<run.count where !run[offset: offset].isHole { body(run[offset: offset].slot) }
        }
    }

    // MARK: Queries

    /// The smallest key among entries whose slot passes `accept`; `.max` if none. The heap's
    /// top and the runs' fronts answer unless their timers fail (only inside a nested run).
    func earliestKey(where accept: (Int32) -> Bool) -> Int64 {
        var best = Int64.max
        forEachRun { run in
            for offset in 0..<run.count {
                let entry = run[offset: offset]
                guard entry.key < best else { break }
                if !entry.isHole, accept(entry.slot) {
                    best = entry.key
                    break
                }
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
    /// anyway; each run's are searched from its last one at or before `limit`).
    func latestKey(atOrBefore limit: Int64, where accept: (Int32) -> Bool) -> Int64? {
        var best: Int64?
        forEachRun { run in
            guard let last = run.lastOffset(atOrBefore: limit) else { return }
            for offset in stride(from: last, through: 0, by: -1) {
                let entry = run[offset: offset]
                guard entry.key > best ?? .min else { break }
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
    /// runs' fronts answer unless they fail, when the due entries after them are visited.
    func earliest(dueBy now: Int64, where accept: (Int32) -> Bool) -> HeapEntry? {
        var best: HeapEntry?
        forEachRun { run in
            for offset in 0..<run.count {
                let entry = run[offset: offset]
                guard entry.key <= now else { break }
                // A hole is stepped over, not compared: its slot (-1) has no record, which
                // a tie with `best` outside the tie window would read.
                if entry.isHole { continue }
                guard best.map({ precedes(entry, $0) }) ?? true else { break }
                if accept(entry.slot) {
                    best = entry
                    break
                }
            }
        }
        guard let top = heap.first, top.key <= now else { return best }
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

    /// The id of the first run whose back `entry` may go to (it does not precede the run's
    /// last); -1 if neither.
    @inline(__always)
    private func fittingRunID(for entry: HeapEntry, exactTies: Bool) -> Int {
        if fits(entry, run, exactTies: exactTies) { return 0 }
        if fits(entry, secondRun, exactTies: exactTies) { return 1 }
        return -1
    }

    @inline(__always)
    private func fits(_ entry: HeapEntry, _ run: SortedRun, exactTies: Bool) -> Bool {
        guard let last = run.last else { return true }
        return exactTies ? entry.rank >= last.rank : !precedes(entry, last)
    }

    /// The children of `index` in the heap.
    private func children(of index: Int) -> Range<Int> {
        let first = TimerHeap.arity * index + 1
        return min(first, heap.count)..<min(first + TimerHeap.arity, heap.count)
    }
}
