import RunLoopKitPlatform
import RunLoopKitBackend

/// The timers of one mode, ordered for two questions: which timers are due, and when must
/// the loop wake.
///
/// Coalescing is greedy: the loop wakes at the earliest `fire + tolerance` over all timers
/// and then fires every timer whose fire instant has passed. Among all wake schedules that
/// respect every tolerance, this one wakes the fewest times.
///
/// Storage is compact: by slot (reused after removal), a ``TimerRecord`` (the timer, 8
/// bytes), the firing pass that last touched it and the position of its fire entry (4
/// bytes each), and, in a queue that ever held a tolerant timer, the position of its
/// deadline entry; and ``TimerOrder``s of 16-byte ``HeapEntry``s: each a sorted run for
/// entries that arrive in order (a repeating timer rescheduled after every timer queued
/// before it moves in O(1)) and a 4-ary heap for the others (libev's layout). Timers
/// without tolerance (the common case) sit in one order by fire instant, which answers
/// both questions; timers with a tolerance sit in an order by fire instant and in one by
/// fire + tolerance. A sift compares 128-bit ranks and writes each moved entry's position
/// into the position array (4 bytes per timer: 400 KB for 100k timers); no reference
/// counting anywhere on that path. 32 bytes per exact timer in all.
///
/// The queue owns each queued timer: the record holds it retained from ``insert(_:)`` to
/// ``remove(_:of:)`` (or ``releaseAll()``, when the mode goes away), so an added timer that
/// nobody else references keeps firing, as in CF, without a retain cycle.
///
/// A timer without tolerance leaves at once but its entry lazily: the record is marked
/// departed (``TimerRecord/isDeparted``, keeping the timer's sequence when ties need it)
/// and the entry stays in the exact order until it reaches the front or the departed
/// entries are three quarters of the order, when they are purged together in O(n) (Go's
/// runtime treats its deleted timers alike). An invalidate then touches the timer and its
/// record, not the position, the entry and the entries a sift moves: in a queue of 100k
/// timers those are cache misses, each waited for (PROFILING.md has the figures).
///
/// The corresponding CF structure is the sorted `_timers` array of `__CFRunLoopMode`;
/// CF on Linux ignores tolerance, so it has no second ordering.
struct TimerQueue {
    // Stores, not arrays: references owned by this queue alone (see ``TimerStore``).
    private let records = TimerStore<TimerRecord>()
    /// By slot: the firing pass in which the timer was queued or re-sorted (it waits for the
    /// next pass, as a timer outside CF's snapshot of due timers does).
    private let touchedInPass = TimerStore<UInt32>()
    /// By slot: the position of the timer's entry in its fire order (exact or tolerant),
    /// and in the deadline order (-1 if none). The second stays empty until the queue holds
    /// a tolerant timer, so exact timers never touch it nor pay its 4 bytes.
    private let fireIndices = TimerStore<Int32>()
    private let latestIndices = TimerStore<Int32>()
    private let freeSlots = TimerStore<Int32>()
    private let exact: TimerOrder
    private let tolerantByFire: TimerOrder
    private let tolerantByLatest: TimerOrder
    /// The current firing pass (see ``beginFiringPass()``).
    private var pass: UInt32 = 1
    /// Entries of departed timers left in the exact order.
    private var departed = 0
    /// Turns creation sequences into the entries' 32-bit tie-breakers.
    private var ties = TieWindow()

    init() {
        exact = TimerOrder(positions: fireIndices, records: records)
        tolerantByFire = TimerOrder(positions: fireIndices, records: records)
        tolerantByLatest = TimerOrder(positions: latestIndices, records: records)
    }

    var isEmpty: Bool { exact.count == departed && tolerantByFire.isEmpty }

    /// When the loop must wake to honour every tolerance, ignoring timers whose callout is
    /// on the stack (as CF's `__CFArmNextTimerInMode` does); every instant `distantFuture`
    /// with no timers.
    ///
    /// The window ends at the earliest `fire + tolerance`. Every timer due then is already
    /// due at the latest fire date at or before it (`served`), so a wake there fires the
    /// same timers with the same number of wakeups, sooner: a lone tolerant timer fires on
    /// time, not at the end of its tolerance.
    /// (`mutating` only so that callers reach the queue in place, as for ``nextDue(at:)``.)
    var wake: WakeWindow {
        mutating get {
            if departed > 0 { dropDepartedFront() }
            // Closures capture the records' address, not the queue or its stores (copies
            // that would count references on every call).
            let records = self.records.base
            let isNotFiring = { (slot: Int32) in Self.isNotFiring(slot, records) }
            let exactFire = exact.earliestKey(where: isNotFiring)
            let tolerantEnd = tolerantByLatest.earliestKey(where: isNotFiring)
            if exactFire <= tolerantEnd {
                return WakeWindow(first: exactFire, served: exactFire, latest: exactFire, precise: exactFire != .max)
            }
            // Every zero-tolerance timer fires after `tolerantEnd`, so only tolerant ones are due.
            let served = tolerantByFire.latestKey(atOrBefore: tolerantEnd, where: isNotFiring) ?? tolerantEnd
            let first = min(tolerantByFire.earliestKey(where: isNotFiring), served)
            return WakeWindow(first: first, served: served, latest: tolerantEnd, precise: false)
        }
    }

    /// Queues `timer` (retaining it) and returns its slot. (Inlined in its one caller,
    /// ``LoopEngine/insert(_:into:)``.)
    @inline(__always)
    mutating func insert(_ timer: EVTimer) -> Int32 {
        let record = TimerRecord(timer: .passRetained(timer))
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            records[Int(slot)] = record
            touchedInPass[Int(slot)] = pass
        } else {
            slot = Int32(records.count)
            records.append(record)
            touchedInPass.append(pass)
            fireIndices.append(-1)
        }
        place(slot, tolerant: timer.toleranceNanos != 0, fire: timer.fireNanos, latest: timer.latestNanos)
        return slot
    }

    /// Takes `timer`, in `slot`, out of the queue (releasing it). A tolerant timer's entries
    /// go now and the slot is free; an exact timer's record departs, and its entry and slot
    /// go later (see the type's notes).
    mutating func remove(_ slot: Int32, of timer: EVTimer) {
        #if DEBUG
        require(records[Int(slot)].timer.toOpaque() == Unmanaged.passUnretained(timer).toOpaque(),
                "TimerQueue.remove: slot \(slot) holds another timer")
        #endif
        if Int(slot) < latestIndices.count, latestIndices[Int(slot)] != -1 {  // tolerant
            unplace(slot)
            freeSlots.append(slot)
        } else {
            // Its sequence orders only ties outside the tie window: while every tie is
            // inside it, none is read, and not reading it keeps the timer's last cache line
            // out of an invalidate (fewer cache misses per invalidate: PROFILING.md,
            // "Tricks and what they earn").
            records[Int(slot)] = TimerRecord(departed: ties.isExact ? 0 : timer.sequence)
            departed += 1
            if departed >= 32, departed * 4 > exact.count * 3 { purgeDeparted() }
        }
        Self.release(.passUnretained(timer))
    }

    /// Frees the slot of a departed timer whose entry was dropped.
    private mutating func freeDeparted(_ slot: Int32) {
        fireIndices[Int(slot)] = -1
        freeSlots.append(slot)
        departed -= 1
    }

    /// Drops the departed entries at the front of the exact order (each one heap removal,
    /// as an eager removal would have cost). Callers test `departed > 0` first: out of line,
    /// so that the fire path (``nextDue(at:)``) stays small enough to inline.
    @inline(never)
    private mutating func dropDepartedFront() {
        while let front = exact.first, records[Int(front.slot)].isDeparted {
            exact.remove(at: exact.position(of: front.slot), exactTies: ties.isExact)
            freeDeparted(front.slot)
        }
    }

    /// Drops every departed entry, in one pass over the exact order.
    private mutating func purgeDeparted() {
        exact.removeDeparted(freeing: freeSlots, exactTies: ties.isExact)
        departed = 0
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
        let (fire, tolerance) = records[Int(slot)].timer._withUnsafeGuaranteedRef { ($0.fireNanos, $0.toleranceNanos) }
        let tolerant = tolerance != 0
        touchedInPass[Int(slot)] = pass
        // A timer that just fired from the front of the exact order (the common case) is
        // still there unless its callout changed the order: no read of its position then.
        let firePosition = exact.position(of: slot)
        // With no tolerant timer queued, every entry is in the exact order.
        let wasTolerant = !tolerantByFire.isEmpty && !exact.holds(slot, at: firePosition)
        guard wasTolerant == tolerant else {
            unplace(slot)
            place(slot, tolerant: tolerant, fire: fire, latest: fire.saturatingAdd(tolerance))
            return
        }
        if tolerant {
            tolerantByFire.rekey(at: firePosition, to: fire, exactTies: ties.isExact)
            tolerantByLatest.rekey(at: latestIndices[Int(slot)], to: fire.saturatingAdd(tolerance), exactTies: ties.isExact)
        } else {
            exact.rekey(at: firePosition, to: fire, exactTies: ties.isExact)
        }
    }

    // Inlined by hand (PROFILING.md, "Tricks and what they earn").
    @inline(__always)
    private mutating func place(_ slot: Int32, tolerant: Bool, fire: Int64, latest: Int64) {
        let tie = ties.tie(for: records[Int(slot)].sequence)  // the same tie every time
        if tolerant {
            while latestIndices.count < records.count { latestIndices.append(-1) }
            tolerantByFire.push(HeapEntry(key: fire, slot: slot, tie: tie), exactTies: ties.isExact)
            tolerantByLatest.push(HeapEntry(key: latest, slot: slot, tie: tie), exactTies: ties.isExact)
        } else {
            exact.push(HeapEntry(key: fire, slot: slot, tie: tie), exactTies: ties.isExact)
        }
    }

    private mutating func unplace(_ slot: Int32) {
        let firePosition = fireIndices[Int(slot)]
        if exact.holds(slot, at: firePosition) {
            exact.remove(at: firePosition, exactTies: ties.isExact)
        } else {
            tolerantByFire.remove(at: firePosition, exactTies: ties.isExact)
            tolerantByLatest.remove(at: latestIndices[Int(slot)], exactTies: ties.isExact)
            latestIndices[Int(slot)] = -1
        }
        fireIndices[Int(slot)] = -1
    }

    /// Whether any timer's fire date is at or before `now` (the earliest entries; a pass
    /// with none due skips the firing loop). (`mutating` only so that callers reach the queue
    /// in place: a call on a mode state's queue otherwise copies the queue out first.)
    mutating func hasDue(at now: Int64) -> Bool {
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
        for index in touchedInPass.indices { touchedInPass[index] = 0 }
    }

    /// The next timer to fire in this pass: the earliest (then oldest) timer due at `now`
    /// that was queued before the pass began, valid and not firing. Returned unretained: the
    /// caller sets ``EVTimer/heldByPass`` before the callout, and a removal meanwhile defers
    /// the queue's release until the caller is done (``EVTimer/releasesAfterFiring``), so the
    /// timer outlives its fire without reference counting per fire.
    /// (`mutating` only so that callers reach the queue in place: a read of a class's stored
    /// struct would copy it, retaining its stores.)
    @inline(__always)
    mutating func nextDue(at now: Int64) -> Unmanaged<EVTimer>? {
        if departed > 0 { dropDepartedFront() }
        // Addresses, valid while no slot is added (no reference counting per fire).
        let (records, touchedInPass, pass) = (self.records.base, self.touchedInPass.base, self.pass)
        let isEligible = { (slot: Int32) in touchedInPass[Int(slot)] != pass && Self.isNotFiring(slot, records) }
        if tolerantByFire.isEmpty {  // the common case: one order to ask
            guard let top = exact.first, top.key <= now else { return nil }
            if isEligible(top.slot) { return records[Int(top.slot)].timer }
        }
        let a = exact.earliest(dueBy: now, where: isEligible)
        let b = tolerantByFire.earliest(dueBy: now, where: isEligible)
        let entry: HeapEntry
        switch (a, b) {
        case (nil, nil): return nil
        case let (a?, nil): entry = a
        case let (nil, b?): entry = b
        case let (a?, b?): entry = exact.precedes(a, b) ? a : b
        }
        return records[Int(entry.slot)].timer
    }

    /// Every timer in the queue, in no particular order.
    var allTimers: [EVTimer] {
        var timers: [EVTimer] = []
        forEachQueuedTimer { timers.append($0.takeUnretainedValue()) }
        return timers
    }

    /// Calls `body` with every queued timer (not the departed), in no particular order.
    private func forEachQueuedTimer(_ body: (Unmanaged<EVTimer>) -> Void) {
        for order in [exact, tolerantByFire] {
            order.forEachSlot { slot in
                let record = records[Int(slot)]
                if !record.isDeparted { body(record.timer) }
            }
        }
    }

    /// Lets go of every queued timer (the mode is going away).
    mutating func releaseAll() {
        forEachQueuedTimer { Self.release($0) }
        departed = 0
        for order in [exact, tolerantByFire, tolerantByLatest] { order.removeAll() }
        for store in [fireIndices, latestIndices, freeSlots] { store.removeAll() }
        records.removeAll()
        touchedInPass.removeAll()
    }

    // MARK: Queries

    /// Whether the wake heeds the timer in `slot`: it is still queued (not departed), its
    /// callout is not on the stack, and it was not invalidated on another thread with its
    /// removal still in the loop's inbox (the loop never wakes for an invalid timer).
    /// (`records` is the address of the queue's records.)
    private static func isNotFiring(_ slot: Int32, _ records: UnsafeMutablePointer<TimerRecord>) -> Bool {
        let record = records[Int(slot)]
        return !record.isDeparted && record.timer._withUnsafeGuaranteedRef { !$0.isFiring && $0.isValid }
    }
}

/// One slot of a queue (8 bytes): its timer, retained by the queue; or, once the timer left
/// while its entry stays in the exact order (``TimerQueue/remove(_:of:)``), the timer's
/// sequence, so that ties with the entry still order (0 when the entry's tie is inside
/// the queue's ``TieWindow``: no other entry's tie equals it, so nothing reads it). (The slot's tie is in its entries,
/// the pass that last touched it in the queue's `touchedInPass`, where it sits in the
/// queue's position arrays, which the sifts write.)
struct TimerRecord {
    /// The timer's address (its low bit clear), or the departed timer's sequence shifted
    /// left with bit 0 set.
    private let bits: UInt

    init(timer: Unmanaged<EVTimer>) { bits = UInt(bitPattern: timer.toOpaque()) }

    /// The record of a timer that left the queue, whose entry stays until it reaches the
    /// front or the order is purged.
    init(departed sequence: UInt64) { bits = UInt(truncatingIfNeeded: sequence) << 1 | 1 }

    /// Whether the timer left the queue (its entry is waiting to be dropped).
    var isDeparted: Bool { bits & 1 != 0 }

    /// The timer; only for a record that is not ``isDeparted``.
    var timer: Unmanaged<EVTimer> { Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits)!) }

    /// The timer's creation order: the tie-break for equal fire dates (read only on ties).
    var sequence: UInt64 { isDeparted ? UInt64(bits >> 1) : timer.takeUnretainedValue().sequence }
}
