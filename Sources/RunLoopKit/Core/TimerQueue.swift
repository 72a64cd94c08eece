/// The timers of one mode, ordered for two questions: which timers are due, and when must
/// the loop wake.
///
/// Coalescing is greedy: the loop wakes at the earliest `fire + tolerance` over all timers
/// and then fires every timer whose fire instant has passed. Among all wake schedules that
/// respect every tolerance, this one wakes the fewest times.
///
/// Storage is compact: one ``TimerRecord`` per queued timer in a contiguous array (a slot,
/// reused after removal), and 4-ary heaps of 16-byte ``HeapEntry``s (fire instant and slot,
/// libev's layout). Timers without tolerance (the common case) sit in one heap by fire
/// instant, which answers both questions; timers with a tolerance sit in a heap by fire
/// instant and in one by fire + tolerance. A sift compares plain integers and writes each
/// moved entry's index into its record; no reference counting anywhere on that path.
///
/// The queue owns each queued timer: the record holds it retained from ``insert(_:)`` to
/// ``remove(_:)`` (or ``releaseAll()``, when the mode goes away), so an added timer that
/// nobody else references keeps firing, as in CF, without a retain cycle.
///
/// The corresponding CF structure is the sorted `_timers` array of `__CFRunLoopMode`;
/// CF on Linux ignores tolerance, so it has no second ordering.
struct TimerQueue {
    private var records: [TimerRecord] = []
    private var freeSlots: [Int32] = []
    private var exact: [HeapEntry] = []
    private var tolerantByFire: [HeapEntry] = []
    private var tolerantByLatest: [HeapEntry] = []
    /// The current firing pass (see ``beginFiringPass()``).
    private var pass: UInt32 = 1
    /// Turns creation sequences into the entries' 32-bit tie-breakers.
    private var ties = TieWindow()

    var isEmpty: Bool { exact.isEmpty && tolerantByFire.isEmpty }

    /// When the loop must wake to honour every tolerance, ignoring timers whose callout is
    /// on the stack (as CF's `__CFArmNextTimerInMode` does); `.at(.max)` with no timers.
    ///
    /// The window ends at the earliest `fire + tolerance`. Every timer due then is already
    /// due at the latest fire date at or before it (`served`), so a wake there fires the
    /// same timers with the same number of wakeups, sooner: a lone tolerant timer fires on
    /// time, not at the end of its tolerance.
    var wake: WakeWindow {
        let exactFire = earliestKeyNotFiring(exact)
        let tolerantEnd = earliestKeyNotFiring(tolerantByLatest)
        if exactFire <= tolerantEnd {
            return WakeWindow(first: exactFire, served: exactFire, latest: exactFire, precise: exactFire != .max)
        }
        // Every zero-tolerance timer fires after `tolerantEnd`, so only tolerant ones are due.
        let served = latestKeyNotFiring(tolerantByFire, atOrBefore: tolerantEnd) ?? tolerantEnd
        let first = min(earliestKeyNotFiring(tolerantByFire), served)
        return WakeWindow(first: first, served: served, latest: tolerantEnd, precise: false)
    }

    /// Queues `timer` (retaining it) and returns its slot.
    mutating func insert(_ timer: EVTimer) -> Int32 {
        let record = TimerRecord(timer: .passRetained(timer), tie: ties.tie(for: timer.sequence), touchedInPass: pass)
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            records[Int(slot)] = record
        } else {
            slot = Int32(records.count)
            records.append(record)
        }
        place(slot, tolerant: timer.toleranceNanos != 0, fire: timer.fireNanos, latest: timer.latestNanos)
        return slot
    }

    /// Takes the timer in `slot` out of the queue (releasing it) and frees the slot.
    mutating func remove(_ slot: Int32) {
        unplace(slot)
        Self.release(records[Int(slot)].timer)
        freeSlots.append(slot)
    }

    /// Lets go of the queue's reference to `timer`; while a firing pass holds it unretained
    /// (see ``nextDue(at:)``), the release waits until the pass is done with it.
    private static func release(_ timer: Unmanaged<EVTimer>) {
        let deferred = timer._withUnsafeGuaranteedRef { timer in
            guard timer.heldByPass else { return false }
            timer.releasesAfterFiring += 1
            return true
        }
        if !deferred { timer.release() }
    }

    /// Re-sorts the timer in `slot` after its fire date or tolerance changed.
    mutating func update(_ slot: Int32) {
        let (fire, latest, tolerant) = records[Int(slot)].timer._withUnsafeGuaranteedRef {
            ($0.fireNanos, $0.latestNanos, $0.toleranceNanos != 0)
        }
        records[Int(slot)].touchedInPass = pass
        let wasTolerant = records[Int(slot)].latestIndex >= 0
        guard wasTolerant == tolerant else {
            unplace(slot)
            place(slot, tolerant: tolerant, fire: fire, latest: latest)
            return
        }
        let index = Int(records[Int(slot)].fireIndex)
        if tolerant {
            tolerantByFire[index].key = fire
            Self.restore(&tolerantByFire, index, &records, byLatest: false)
            let latestIndex = Int(records[Int(slot)].latestIndex)
            tolerantByLatest[latestIndex].key = latest
            Self.restore(&tolerantByLatest, latestIndex, &records, byLatest: true)
        } else {
            exact[index].key = fire
            Self.restore(&exact, index, &records, byLatest: false)
        }
    }

    private mutating func place(_ slot: Int32, tolerant: Bool, fire: Int64, latest: Int64) {
        if tolerant {
            let tie = records[Int(slot)].tie
            Self.push(&tolerantByFire, HeapEntry(key: fire, slot: slot, tie: tie), &records, byLatest: false)
            Self.push(&tolerantByLatest, HeapEntry(key: latest, slot: slot, tie: tie), &records, byLatest: true)
        } else {
            Self.push(&exact, HeapEntry(key: fire, slot: slot, tie: records[Int(slot)].tie), &records, byLatest: false)
        }
    }

    private mutating func unplace(_ slot: Int32) {
        let fireIndex = Int(records[Int(slot)].fireIndex)
        let latestIndex = Int(records[Int(slot)].latestIndex)
        if latestIndex >= 0 {
            Self.remove(&tolerantByFire, at: fireIndex, &records, byLatest: false)
            Self.remove(&tolerantByLatest, at: latestIndex, &records, byLatest: true)
        } else {
            Self.remove(&exact, at: fireIndex, &records, byLatest: false)
        }
        records[Int(slot)].fireIndex = -1
        records[Int(slot)].latestIndex = -1
    }

    /// Whether any timer's fire date is at or before `now` (the heap tops; a pass with none
    /// due skips the firing loop).
    func hasDue(at now: Int64) -> Bool {
        (exact.first?.key ?? .max) <= now || (tolerantByFire.first?.key ?? .max) <= now
    }

    /// Starts a firing pass: timers inserted or re-sorted from now on are not due in it.
    /// Together with ``nextDue(at:)`` this gives CF's snapshot semantics (the timers due when
    /// the pass starts fire, in fire order) without copying or sorting a snapshot.
    mutating func beginFiringPass() {
        pass &+= 1
        guard pass == 0 else { return }
        // Once in 2^32 passes: no record may keep a number the coming passes will reuse.
        pass = 1
        for index in records.indices { records[index].touchedInPass = 0 }
    }

    /// The next timer to fire in this pass: the earliest (then oldest) timer due at `now`
    /// that was queued before the pass began, valid and not firing. Returned unretained: the
    /// caller sets ``EVTimer/heldByPass`` before the callout, and a removal meanwhile defers
    /// the queue's release until the caller is done (``EVTimer/releasesAfterFiring``), so the
    /// timer outlives its fire without reference counting per fire.
    /// (`mutating` only so that callers reach the queue in place: a read of a class's stored
    /// struct would copy it, retaining its arrays.)
    mutating func nextDue(at now: Int64) -> Unmanaged<EVTimer>? {
        let a = firstEligible(exact, dueBy: now)
        let b = firstEligible(tolerantByFire, dueBy: now)
        let entry: HeapEntry
        switch (a, b) {
        case (nil, nil): return nil
        case let (a?, nil): entry = a
        case let (nil, b?): entry = b
        case let (a?, b?): entry = before(a, b) ? a : b
        }
        return records[Int(entry.slot)].timer
    }

    /// Every timer in the queue, in no particular order.
    var allTimers: [EVTimer] {
        (exact + tolerantByFire).map { records[Int($0.slot)].timer.takeUnretainedValue() }
    }

    /// Lets go of every queued timer (the mode is going away).
    mutating func releaseAll() {
        for entry in exact + tolerantByFire { Self.release(records[Int(entry.slot)].timer) }
        records = []
        freeSlots = []
        exact = []
        tolerantByFire = []
        tolerantByLatest = []
    }

    // MARK: Queries

    /// By key, then by creation, so equal dates fire in creation order.
    private func before(_ a: HeapEntry, _ b: HeapEntry) -> Bool {
        a.key != b.key ? a.key < b.key : Self.createdBefore(a, b, records)
    }

    /// The tie-break of equal keys: creation order, from the entries' ties when they
    /// differ, otherwise (both outside the window) from the timers' full sequences.
    private static func createdBefore(_ a: HeapEntry, _ b: HeapEntry, _ records: [TimerRecord]) -> Bool {
        if a.tie != b.tie { return a.tie < b.tie }
        return records[Int(a.slot)].sequence < records[Int(b.slot)].sequence
    }

    /// The timers' full sequences: ties outside the window (rare).
    @inline(never)
    private static func sequenceBefore(
        _ a: HeapEntry, _ b: HeapEntry, _ records: UnsafeMutableBufferPointer<TimerRecord>
    ) -> Bool {
        records[Int(a.slot)].sequence < records[Int(b.slot)].sequence
    }

    /// Whether the wake ignores the timer in `slot`: its callout is on the stack, or it was
    /// invalidated on another thread and its removal is still in the loop's inbox (the loop
    /// never wakes for an invalid timer).
    private func isFiring(_ slot: Int32) -> Bool {
        records[Int(slot)].timer._withUnsafeGuaranteedRef { $0.isFiring || !$0.isValid }
    }

    private func isEligible(_ slot: Int32) -> Bool {
        records[Int(slot)].touchedInPass != pass
            && records[Int(slot)].timer._withUnsafeGuaranteedRef { !$0.isFiring && $0.isValid }
    }

    /// The smallest key among timers not firing; `.max` if none. The top answers unless its
    /// timer is firing (only inside a nested run), when a walk descends through firing ones.
    private func earliestKeyNotFiring(_ heap: [HeapEntry]) -> Int64 {
        guard let top = heap.first else { return .max }
        if !isFiring(top.slot) { return top.key }
        var best = Int64.max
        var stack = [0]
        while let index = stack.popLast() {
            let entry = heap[index]
            guard entry.key < best else { continue }
            if !isFiring(entry.slot) {
                best = entry.key
                continue
            }
            for child in children(of: index, count: heap.count) { stack.append(child) }
        }
        return best
    }

    /// The largest key at or before `limit` among timers not firing (a walk of the entries
    /// at or before `limit`: the timers the coming wake serves anyway).
    private func latestKeyNotFiring(_ heap: [HeapEntry], atOrBefore limit: Int64) -> Int64? {
        guard let top = heap.first, top.key <= limit else { return nil }
        var best: Int64?
        var stack = [0]
        while let index = stack.popLast() {
            let entry = heap[index]
            guard entry.key <= limit else { continue }
            if !isFiring(entry.slot), entry.key > best ?? .min { best = entry.key }
            for child in children(of: index, count: heap.count) { stack.append(child) }
        }
        return best
    }

    /// The earliest entry due by `now` whose timer may fire in this pass. The top answers
    /// unless it is not eligible (its callout is on the stack, or it was touched in this
    /// pass), when a walk visits the due subtree under it.
    private func firstEligible(_ heap: [HeapEntry], dueBy now: Int64) -> HeapEntry? {
        guard let top = heap.first, top.key <= now else { return nil }
        if isEligible(top.slot) { return top }
        var best: HeapEntry?
        var stack = [0]
        while let index = stack.popLast() {
            let entry = heap[index]
            guard entry.key <= now, best.map({ before(entry, $0) }) ?? true else { continue }
            if isEligible(entry.slot) {
                best = entry
                continue
            }
            for child in children(of: index, count: heap.count) { stack.append(child) }
        }
        return best
    }

    // MARK: The 4-ary heap (half the depth of a binary heap; libev's shape for its timers)

    private static let arity = 4

    private func children(of index: Int, count: Int) -> Range<Int> {
        let first = Self.arity * index + 1
        return min(first, count)..<min(first + Self.arity, count)
    }

    private static func push(
        _ heap: inout [HeapEntry], _ entry: HeapEntry, _ records: inout [TimerRecord], byLatest: Bool
    ) {
        heap.append(entry)
        siftUp(&heap, heap.count - 1, &records, byLatest: byLatest)
    }

    private static func remove(
        _ heap: inout [HeapEntry], at index: Int, _ records: inout [TimerRecord], byLatest: Bool
    ) {
        let last = heap.removeLast()
        guard index < heap.count else { return }
        heap[index] = last
        setIndex(&records, last.slot, index, byLatest: byLatest)
        restore(&heap, index, &records, byLatest: byLatest)
    }

    private static func restore(
        _ heap: inout [HeapEntry], _ index: Int, _ records: inout [TimerRecord], byLatest: Bool
    ) {
        if index > 0, before(heap[index], heap[(index - 1) / arity], records) {
            siftUp(&heap, index, &records, byLatest: byLatest)
        } else {
            siftDown(&heap, index, &records, byLatest: byLatest)
        }
    }

    private static func before(_ a: HeapEntry, _ b: HeapEntry, _ records: [TimerRecord]) -> Bool {
        a.key != b.key ? a.key < b.key : createdBefore(a, b, records)
    }

    private static func setIndex(_ records: inout [TimerRecord], _ slot: Int32, _ index: Int, byLatest: Bool) {
        if byLatest { records[Int(slot)].latestIndex = Int32(index) } else { records[Int(slot)].fireIndex = Int32(index) }
    }

    private static func siftUp(
        _ heap: inout [HeapEntry], _ start: Int, _ records: inout [TimerRecord], byLatest: Bool
    ) {
        records.withUnsafeMutableBufferPointer { records in
            heap.withUnsafeMutableBufferPointer { heap in
                var index = start
                let entry = heap[index]
                while index > 0 {
                    let parent = (index &- 1) / arity
                    guard precedes(entry, heap[parent], records) else { break }
                    heap[index] = heap[parent]
                    mark(records, heap[index].slot, index, byLatest)
                    index = parent
                }
                heap[index] = entry
                mark(records, entry.slot, index, byLatest)
            }
        }
    }

    @inline(__always)
    private static func siftDown(
        _ heap: inout [HeapEntry], _ start: Int, _ records: inout [TimerRecord], byLatest: Bool
    ) {
        records.withUnsafeMutableBufferPointer { records in
            heap.withUnsafeMutableBufferPointer { heap in
                var index = start
                let entry = heap[index]
                let count = heap.count
                while true {
                    let first = arity &* index &+ 1
                    guard first < count else { break }
                    // The earliest child; a node with all four children (every level but the
                    // last) compares them without a loop.
                    var child = first
                    if first &+ 3 < count {
                        let pairA = precedes(heap[first &+ 1], heap[first], records) ? first &+ 1 : first
                        let pairB = precedes(heap[first &+ 3], heap[first &+ 2], records) ? first &+ 3 : first &+ 2
                        child = precedes(heap[pairB], heap[pairA], records) ? pairB : pairA
                    } else {
                        var other = first &+ 1
                        while other < count {
                            if precedes(heap[other], heap[child], records) { child = other }
                            other &+= 1
                        }
                    }
                    guard precedes(heap[child], entry, records) else { break }
                    heap[index] = heap[child]
                    mark(records, heap[index].slot, index, byLatest)
                    index = child
                }
                heap[index] = entry
                mark(records, entry.slot, index, byLatest)
            }
        }
    }

    @inline(__always)
    private static func precedes(
        _ a: HeapEntry, _ b: HeapEntry, _ records: UnsafeMutableBufferPointer<TimerRecord>
    ) -> Bool {
        if a.key != b.key { return a.key < b.key }
        if a.tie != b.tie { return a.tie < b.tie }
        return sequenceBefore(a, b, records)
    }

    @inline(__always)
    private static func mark(
        _ records: UnsafeMutableBufferPointer<TimerRecord>, _ slot: Int32, _ index: Int, _ byLatest: Bool
    ) {
        if byLatest { records[Int(slot)].latestIndex = Int32(truncatingIfNeeded: index) } else {
            records[Int(slot)].fireIndex = Int32(truncatingIfNeeded: index)
        }
    }
}

/// One queued timer in one mode (24 bytes): the timer (retained by the queue), where it
/// sits in the heaps, its tie-breaker, and the firing pass that last touched it.
struct TimerRecord {
    let timer: Unmanaged<EVTimer>
    /// The timer's creation order as its entries carry it (see ``TieWindow``).
    let tie: UInt32
    /// Index in the fire heap (exact or tolerant), and in the deadline heap (-1 if none).
    var fireIndex: Int32 = -1
    var latestIndex: Int32 = -1
    /// The firing pass in which the timer was queued or re-sorted: it waits for the next
    /// pass, as a timer outside CF's snapshot of due timers does.
    var touchedInPass: UInt32

    /// The timer's creation order: the tie-break for equal fire dates (read only on ties).
    var sequence: UInt64 { timer._withUnsafeGuaranteedRef { $0.sequence } }
}

/// A heap entry: the key (fire instant, or fire + tolerance), the record's slot and the
/// timer's tie-breaker (its creation order, see ``TieWindow``); 16 bytes, as libev's. Equal
/// keys (timers made for one date, or one interval from one start) compare their ties
/// without leaving the heap.
struct HeapEntry {
    var key: Int64
    let slot: Int32
    let tie: UInt32
}

/// Creation sequences (64-bit, from one process-wide counter) as 32-bit tie-breakers in
/// the same order: a sequence within 2^31 of the first one the queue saw maps to its offset
/// in that window, one before the window to 0, one after it to `UInt32.max`. The map never
/// reverses an order, and two different timers get equal ties only outside the window, so
/// a comparison whose ties are equal reads the timers' full sequences instead. Ties thus
/// compare exactly, and almost always without touching the timers.
struct TieWindow {
    private var base: UInt64?

    mutating func tie(for sequence: UInt64) -> UInt32 {
        let base = self.base ?? (sequence > (1 << 31) ? sequence - (1 << 31) : 0)
        self.base = base
        guard sequence > base else { return 0 }
        return UInt32(min(sequence - base, UInt64(UInt32.max)))
    }
}
