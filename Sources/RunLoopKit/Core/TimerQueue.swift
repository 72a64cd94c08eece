/// One timer's place in one mode's ``TimerQueue``.
///
/// A timer in several modes has one node per mode. The node remembers where it sits in the
/// queue's heaps, so removal and rescheduling are O(log n).
final class TimerNode {
    let timer: EVTimer
    /// The mode whose queue holds the node. Unowned: a loop never drops a mode state while
    /// its queue holds nodes (the loop's teardown empties every timer's nodes first).
    unowned(unsafe) let state: ModeState
    /// Position in the queue's fire heap, and in its deadline heap (-1 when not in it).
    // Loop thread only, written during sifts that never span a callout.
    @exclusivity(unchecked) var fireIndex = -1
    @exclusivity(unchecked) var latestIndex = -1
    /// The firing pass in which the node was inserted or re-sorted: such a node waits for the
    /// next pass, as a timer outside CF's snapshot of due timers does.
    @exclusivity(unchecked) var touchedInPass: UInt64 = 0

    init(timer: EVTimer, state: ModeState) {
        self.timer = timer
        self.state = state
    }

    /// Whether the node is in its queue (it leaves when the timer leaves the mode).
    var isQueued: Bool { fireIndex >= 0 }
}

/// The timers of one mode, ordered for two questions: which timers are due, and when must
/// the loop wake.
///
/// Coalescing is greedy: the loop wakes at the earliest `fire + tolerance` over all timers
/// and then fires every timer whose fire instant has passed. Among all wake schedules that
/// respect every tolerance, this one wakes the fewest times.
///
/// Timers without tolerance (the common case) sit in one heap by fire instant, which
/// answers both questions. Timers with a tolerance sit in a heap by fire instant and in one
/// by fire + tolerance.
///
/// The corresponding CF structure is the sorted `_timers` array of `__CFRunLoopMode`;
/// CF on Linux ignores tolerance, so it has no second ordering.
struct TimerQueue {
    private var exact = NodeHeap(kind: .fire)
    private var tolerantByFire = NodeHeap(kind: .fire)
    private var tolerantByLatest = NodeHeap(kind: .latest)
    /// The current firing pass (see ``beginFiringPass()``).
    private var pass: UInt64 = 1

    var isEmpty: Bool { exact.isEmpty && tolerantByFire.isEmpty }

    /// When the loop must wake to honour every tolerance, ignoring timers whose callout is
    /// on the stack (as CF's `__CFArmNextTimerInMode` does); `.at(.max)` with no timers.
    ///
    /// The window ends at the earliest `fire + tolerance`. Every timer due then is already
    /// due at the latest fire date at or before it (`served`), so a wake there fires the
    /// same timers with the same number of wakeups, sooner: a lone tolerant timer fires on
    /// time, not at the end of its tolerance.
    var wake: WakeWindow {
        let exactFire = exact.earliestKeyNotFiring()
        let tolerantEnd = tolerantByLatest.earliestKeyNotFiring()
        if exactFire <= tolerantEnd {
            return WakeWindow(first: exactFire, served: exactFire, latest: exactFire, precise: exactFire != .max)
        }
        // Every zero-tolerance timer fires after `tolerantEnd`, so only tolerant ones are due.
        let served = tolerantByFire.latestKeyNotFiring(atOrBefore: tolerantEnd) ?? tolerantEnd
        let first = min(tolerantByFire.earliestKeyNotFiring(), served)
        return WakeWindow(first: first, served: served, latest: tolerantEnd, precise: false)
    }

    mutating func insert(_ node: TimerNode) {
        node.touchedInPass = pass
        if node.timer.toleranceNanos == 0 {
            exact.insert(node)
        } else {
            tolerantByFire.insert(node)
            tolerantByLatest.insert(node)
        }
    }

    mutating func remove(_ node: TimerNode) {
        if node.latestIndex >= 0 {
            tolerantByFire.remove(node)
            tolerantByLatest.remove(node)
        } else {
            exact.remove(node)
        }
    }

    /// Re-sorts `node` after its timer's fire date or tolerance changed.
    mutating func update(_ node: TimerNode) {
        guard node.isQueued else { return }
        node.touchedInPass = pass
        let wasTolerant = node.latestIndex >= 0
        if wasTolerant == (node.timer.toleranceNanos != 0) {
            if wasTolerant {
                tolerantByFire.update(node)
                tolerantByLatest.update(node)
            } else {
                exact.update(node)
            }
        } else {
            remove(node)
            insert(node)
        }
    }

    /// Starts a firing pass: nodes inserted or re-sorted from now on are not due in it.
    /// Together with ``nextDue(at:)`` this gives CF's snapshot semantics (the timers due when
    /// the pass starts fire, in fire order) without copying or sorting a snapshot.
    mutating func beginFiringPass() { pass &+= 1 }

    /// The next timer to fire in this pass: the earliest (then oldest) node due at `now`
    /// that was queued before the pass began and whose timer is valid and not firing.
    /// Returns the node's timer (retained: the callout may invalidate it and free the node).
    /// (`mutating` only so that callers reach the queue in place: a read of a class's stored
    /// struct would copy it, retaining its three heaps.)
    mutating func nextDue(at now: Int64) -> EVTimer? {
        let a = exact.firstEligible(dueBy: now, pass: pass)
        let b = tolerantByFire.firstEligible(dueBy: now, pass: pass)
        let entry: NodeHeap.Entry
        switch (a, b) {
        case (nil, nil): return nil
        case let (a?, nil): entry = a
        case let (nil, b?): entry = b
        case let (a?, b?): entry = NodeHeap.Entry.before(a, b) ? a : b
        }
        return entry.node._withUnsafeGuaranteedRef { $0.timer }
    }

    /// Every timer in the queue, in no particular order.
    var allTimers: [EVTimer] { (exact.nodes + tolerantByFire.nodes).map(\.timer) }
}

/// A 4-ary min-heap of ``TimerNode``s keyed by fire instant or by fire + tolerance (half
/// the depth of a binary heap, hence half the index updates per sift; libev uses the same
/// shape for its timers).
///
/// Entries carry their key and the timer's creation sequence inline and refer to the node
/// without retaining it (the node's timer keeps it alive while it is queued), so sifting
/// compares and moves plain values: no reference counting on the hot path. Each node
/// records its index, so removal and re-sorting are O(log n).
struct NodeHeap {
    enum Kind { case fire, latest }

    struct Entry {
        var key: Int64
        let sequence: UInt64
        let node: Unmanaged<TimerNode>

        /// By key, then by creation, so equal dates fire in creation order.
        static func before(_ a: Entry, _ b: Entry) -> Bool {
            a.key != b.key ? a.key < b.key : a.sequence < b.sequence
        }
    }

    let kind: Kind
    private var entries: [Entry] = []

    init(kind: Kind) { self.kind = kind }

    var isEmpty: Bool { entries.isEmpty }
    var nodes: [TimerNode] { entries.map { $0.node.takeUnretainedValue() } }

    mutating func insert(_ node: TimerNode) {
        entries.append(Entry(key: key(of: node), sequence: node.timer.sequence, node: .passUnretained(node)))
        siftUp(entries.count - 1)
    }

    mutating func remove(_ node: TimerNode) {
        let index = indexOf(node)
        guard index >= 0 else { return }
        setIndex(entries[index], -1)
        let last = entries.removeLast()
        guard index < entries.count else { return }
        entries[index] = last
        setIndex(last, index)
        restore(index)
    }

    mutating func update(_ node: TimerNode) {
        let index = indexOf(node)
        guard index >= 0 else { return }
        entries[index].key = key(of: node)
        restore(index)
    }

    /// The smallest key among nodes whose timer is not firing; `.max` if none. The top
    /// answers unless its timer is firing (only inside a nested run), when a walk descends
    /// through firing nodes only.
    func earliestKeyNotFiring() -> Int64 {
        guard let top = entries.first else { return .max }
        if !isFiring(top) { return top.key }
        var best = Int64.max
        var stack = [0]
        while let index = stack.popLast() {
            let entry = entries[index]
            guard entry.key < best else { continue }
            if !isFiring(entry) {
                best = entry.key
                continue
            }
            for child in Self.children(of: index, count: entries.count) { stack.append(child) }
        }
        return best
    }

    /// The largest key at or before `limit` among nodes whose timer is not firing (a walk of
    /// the entries at or before `limit`: the timers the coming wake serves anyway).
    func latestKeyNotFiring(atOrBefore limit: Int64) -> Int64? {
        guard let top = entries.first, top.key <= limit else { return nil }
        var best: Int64?
        var stack = [0]
        while let index = stack.popLast() {
            let entry = entries[index]
            guard entry.key <= limit else { continue }
            if !isFiring(entry), entry.key > best ?? .min { best = entry.key }
            for child in Self.children(of: index, count: entries.count) { stack.append(child) }
        }
        return best
    }

    /// The earliest entry due by `now` whose timer may fire in firing pass `pass`. The top
    /// answers unless it is not eligible (its callout is on the stack, or it was touched in
    /// this pass), when a walk visits the due subtree under it.
    func firstEligible(dueBy now: Int64, pass: UInt64) -> Entry? {
        guard let top = entries.first, top.key <= now else { return nil }
        if isEligible(top, pass) { return top }
        var best: Entry?
        var stack = [0]
        while let index = stack.popLast() {
            let entry = entries[index]
            guard entry.key <= now, best.map({ Entry.before(entry, $0) }) ?? true else { continue }
            if isEligible(entry, pass) {
                best = entry
                continue
            }
            for child in Self.children(of: index, count: entries.count) { stack.append(child) }
        }
        return best
    }

    private func isEligible(_ entry: Entry, _ pass: UInt64) -> Bool {
        entry.node._withUnsafeGuaranteedRef { node in
            node.touchedInPass != pass && !node.timer.isFiring && node.timer.isValid
        }
    }

    private func key(of node: TimerNode) -> Int64 {
        kind == .fire ? node.timer.fireNanos : node.timer.latestNanos
    }

    /// Whether the wake ignores `entry`: its callout is on the stack, or it was invalidated
    /// on another thread and its removal is still in the loop's inbox (the loop never wakes
    /// for an invalid timer).
    private func isFiring(_ entry: Entry) -> Bool {
        entry.node._withUnsafeGuaranteedRef { $0.timer.isFiring || !$0.timer.isValid }
    }

    private func indexOf(_ node: TimerNode) -> Int {
        kind == .fire ? node.fireIndex : node.latestIndex
    }

    private func setIndex(_ entry: Entry, _ index: Int) { Self.setIndex(entry, index, kind: kind) }

    private static func setIndex(_ entry: Entry, _ index: Int, kind: Kind) {
        entry.node._withUnsafeGuaranteedRef { node in
            if kind == .fire { node.fireIndex = index } else { node.latestIndex = index }
        }
    }

    private static let arity = 4

    private static func parent(of index: Int) -> Int { (index - 1) / arity }

    private static func children(of index: Int, count: Int) -> Range<Int> {
        let first = arity * index + 1
        return min(first, count)..<min(first + arity, count)
    }

    private mutating func restore(_ index: Int) {
        if index > 0, Entry.before(entries[index], entries[Self.parent(of: index)]) {
            siftUp(index)
        } else {
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        // One uniqueness check for the whole sift, not one per write.
        let kind = kind
        entries.withUnsafeMutableBufferPointer { entries in
            var index = start
            let entry = entries[index]
            while index > 0 {
                let parent = Self.parent(of: index)
                guard Entry.before(entry, entries[parent]) else { break }
                entries[index] = entries[parent]
                Self.setIndex(entries[index], index, kind: kind)
                index = parent
            }
            entries[index] = entry
            Self.setIndex(entry, index, kind: kind)
        }
    }

    private mutating func siftDown(_ start: Int) {
        let kind = kind
        entries.withUnsafeMutableBufferPointer { entries in
            var index = start
            let entry = entries[index]
            let count = entries.count
            while true {
                let first = Self.arity &* index &+ 1
                guard first < count else { break }
                // The earliest child; a node with all four children (every level but the
                // last) compares them without a loop.
                var child = first
                if first &+ 3 < count {
                    let pairA = Entry.before(entries[first &+ 1], entries[first]) ? first &+ 1 : first
                    let pairB = Entry.before(entries[first &+ 3], entries[first &+ 2]) ? first &+ 3 : first &+ 2
                    child = Entry.before(entries[pairB], entries[pairA]) ? pairB : pairA
                } else {
                    var other = first &+ 1
                    while other < count {
                        if Entry.before(entries[other], entries[child]) { child = other }
                        other &+= 1
                    }
                }
                guard Entry.before(entries[child], entry) else { break }
                entries[index] = entries[child]
                Self.setIndex(entries[index], index, kind: kind)
                index = child
            }
            entries[index] = entry
            Self.setIndex(entry, index, kind: kind)
        }
    }
}
