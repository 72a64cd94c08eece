/// The timers of one mode, ordered for two questions: which timers are due, and when must
/// the loop wake.
///
/// Coalescing is greedy: the loop wakes at the earliest `fire + tolerance` over all timers
/// and then fires every timer whose fire instant has passed. Among all wake schedules that
/// respect every tolerance, this one wakes the fewest times.
///
/// Storage is compact: one ``TimerRecord`` (16 bytes) per queued timer in a contiguous array
/// (a slot, reused after removal), the timer's heap indices in two parallel `Int32` arrays,
/// and 4-ary heaps of 16-byte ``HeapEntry``s (libev's layout). Timers without tolerance (the
/// common case) sit in one heap by fire instant, which answers both questions; timers with a
/// tolerance sit in a heap by fire instant and in one by fire + tolerance. A sift compares
/// 128-bit ranks and writes each moved entry's index into the index array (4 bytes per
/// timer: 400 KB for 100k timers, where records would be 1.6 MB); no reference counting
/// anywhere on that path.
///
/// The queue owns each queued timer: the record holds it retained from ``insert(_:)`` to
/// ``remove(_:)`` (or ``releaseAll()``, when the mode goes away), so an added timer that
/// nobody else references keeps firing, as in CF, without a retain cycle.
///
/// The corresponding CF structure is the sorted `_timers` array of `__CFRunLoopMode`;
/// CF on Linux ignores tolerance, so it has no second ordering.
struct TimerQueue {
    // Stores, not arrays: references owned by this queue alone (see ``TimerStore``).
    private let records = TimerStore<TimerRecord>()
    /// By slot: the index of the timer's entry in its fire heap (exact or tolerant), and in
    /// the deadline heap (-1 if none).
    private let fireIndices = TimerStore<Int32>()
    private let latestIndices = TimerStore<Int32>()
    private let freeSlots = TimerStore<Int32>()
    private let exact = TimerStore<HeapEntry>(childrenInOneLine: true)
    private let tolerantByFire = TimerStore<HeapEntry>(childrenInOneLine: true)
    private let tolerantByLatest = TimerStore<HeapEntry>(childrenInOneLine: true)
    /// The current firing pass (see ``beginFiringPass()``).
    private var pass: UInt32 = 1
    /// Turns creation sequences into the entries' 32-bit tie-breakers.
    private var ties = TieWindow()

    var isEmpty: Bool { exact.isEmpty && tolerantByFire.isEmpty }

    /// When the loop must wake to honour every tolerance, ignoring timers whose callout is
    /// on the stack (as CF's `__CFArmNextTimerInMode` does); every instant `distantFuture`
    /// with no timers.
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
            fireIndices.append(-1)
            latestIndices.append(-1)
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
        // A timer that just fired from the top of the exact heap (the common case) is still
        // there unless its callout changed the heap: no read of its index then.
        let fireIndex = !exact.isEmpty && exact[0].slot == slot ? 0 : Int(fireIndices[Int(slot)])
        let wasTolerant = !isExact(slot, at: fireIndex)
        guard wasTolerant == tolerant else {
            unplace(slot)
            place(slot, tolerant: tolerant, fire: fire, latest: latest)
            return
        }
        if tolerant {
            TimerHeap.rekey(tolerantByFire, at: fireIndex, to: fire, fireIndices, records, exactTies: ties.isExact)
            TimerHeap.rekey(tolerantByLatest, at: Int(latestIndices[Int(slot)]), to: latest, latestIndices, records,
                            exactTies: ties.isExact)
        } else {
            TimerHeap.rekey(exact, at: fireIndex, to: fire, fireIndices, records, exactTies: ties.isExact)
        }
    }

    private mutating func place(_ slot: Int32, tolerant: Bool, fire: Int64, latest: Int64) {
        let tie = records[Int(slot)].tie
        if tolerant {
            TimerHeap.push(tolerantByFire, HeapEntry(key: fire, slot: slot, tie: tie), fireIndices, records,
                           exactTies: ties.isExact)
            TimerHeap.push(tolerantByLatest, HeapEntry(key: latest, slot: slot, tie: tie), latestIndices, records,
                           exactTies: ties.isExact)
        } else {
            TimerHeap.push(exact, HeapEntry(key: fire, slot: slot, tie: tie), fireIndices, records,
                           exactTies: ties.isExact)
        }
    }

    private mutating func unplace(_ slot: Int32) {
        let fireIndex = Int(fireIndices[Int(slot)])
        if isExact(slot, at: fireIndex) {
            TimerHeap.remove(exact, at: fireIndex, fireIndices, records, exactTies: ties.isExact)
        } else {
            let latestIndex = Int(latestIndices[Int(slot)])
            TimerHeap.remove(tolerantByFire, at: fireIndex, fireIndices, records, exactTies: ties.isExact)
            TimerHeap.remove(tolerantByLatest, at: latestIndex, latestIndices, records, exactTies: ties.isExact)
            latestIndices[Int(slot)] = -1
        }
        fireIndices[Int(slot)] = -1
    }

    /// Whether the timer in `slot`, whose fire-heap index is `fireIndex`, sits in the exact
    /// heap: told from the entry there (which the caller reads anyway), not from
    /// `latestIndices`, so exact timers never touch that array.
    private func isExact(_ slot: Int32, at fireIndex: Int) -> Bool {
        fireIndex >= 0 && fireIndex < exact.count && exact[fireIndex].slot == slot
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
        if tolerantByFire.isEmpty {  // the common case: one heap to ask
            guard let top = exact.first, top.key <= now else { return nil }
            if isEligible(top.slot) { return records[Int(top.slot)].timer }
        }
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
        (exact.indices.map { exact[$0] } + tolerantByFire.indices.map { tolerantByFire[$0] })
            .map { records[Int($0.slot)].timer.takeUnretainedValue() }
    }

    /// Lets go of every queued timer (the mode is going away).
    mutating func releaseAll() {
        for heap in [exact, tolerantByFire] {
            for index in heap.indices { Self.release(records[Int(heap[index].slot)].timer) }
        }
        for store in [exact, tolerantByFire, tolerantByLatest] { store.removeAll() }
        for store in [fireIndices, latestIndices, freeSlots] { store.removeAll() }
        records.removeAll()
    }

    // MARK: Queries

    /// By key, then by creation, so equal dates fire in creation order (ties compared as
    /// the heaps compare them).
    private func before(_ a: HeapEntry, _ b: HeapEntry) -> Bool {
        TimerHeap.BySequence.precedes(a, b, records: UnsafePointer(records.base))
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
    private func earliestKeyNotFiring(_ heap: TimerStore<HeapEntry>) -> Int64 {
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
    private func latestKeyNotFiring(_ heap: TimerStore<HeapEntry>, atOrBefore limit: Int64) -> Int64? {
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
    private func firstEligible(_ heap: TimerStore<HeapEntry>, dueBy now: Int64) -> HeapEntry? {
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

    /// The children of `index` in a heap of `count` entries.
    private func children(of index: Int, count: Int) -> Range<Int> {
        let first = TimerHeap.arity * index + 1
        return min(first, count)..<min(first + TimerHeap.arity, count)
    }
}

/// One queued timer in one mode (16 bytes): the timer (retained by the queue), its
/// tie-breaker, and the firing pass that last touched it. (Where it sits in the heaps is in
/// the queue's index arrays, which the sifts write.)
struct TimerRecord {
    let timer: Unmanaged<EVTimer>
    /// The timer's creation order as its entries carry it (see ``TieWindow``).
    let tie: UInt32
    /// The firing pass in which the timer was queued or re-sorted: it waits for the next
    /// pass, as a timer outside CF's snapshot of due timers does.
    var touchedInPass: UInt32

    /// The timer's creation order: the tie-break for equal fire dates (read only on ties).
    var sequence: UInt64 { timer._withUnsafeGuaranteedRef { $0.sequence } }
}
