/// One timer's place in one mode's ``TimerQueue``.
///
/// A timer in several modes has one node per mode. The node caches the keys it is sorted
/// by, so heap comparisons never touch the timer itself.
final class TimerNode {
    let timer: EVTimer
    /// The timer's fire instant (ns) and its latest acceptable instant, fire + tolerance.
    var fire: Int64
    var latest: Int64
    /// Position in the queue's fire heap, and in its deadline heap (-1 when not in it).
    var fireIndex = -1
    var latestIndex = -1

    init(timer: EVTimer) {
        self.timer = timer
        fire = timer.fireNanos
        latest = timer.latestNanos
    }

    /// Orders by fire instant, then by timer creation, so equal dates fire in creation order.
    static func firesBefore(_ a: TimerNode, _ b: TimerNode) -> Bool {
        a.fire != b.fire ? a.fire < b.fire : a.timer.sequence < b.timer.sequence
    }

    static func dueBefore(_ a: TimerNode, _ b: TimerNode) -> Bool {
        a.latest != b.latest ? a.latest < b.latest : a.timer.sequence < b.timer.sequence
    }
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

    var isEmpty: Bool { exact.isEmpty && tolerantByFire.isEmpty }
    var count: Int { exact.count + tolerantByFire.count }

    /// The instant (ns) the loop must wake at to honour every tolerance, ignoring timers
    /// whose callout is on the stack (as CF's `__CFArmNextTimerInMode` does), `.max` when
    /// nothing is scheduled; and whether it is a zero-tolerance timer's fire date (which
    /// deserves a precise wake) rather than the end of some timer's tolerance.
    var wake: (nanos: Int64, precise: Bool) {
        let exactWake = exact.earliestKeyNotFiring()
        let tolerantWake = tolerantByLatest.earliestKeyNotFiring()
        return exactWake <= tolerantWake ? (exactWake, exactWake != .max) : (tolerantWake, false)
    }

    mutating func insert(_ node: TimerNode) {
        if node.latest == node.fire {
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
        let wasTolerant = node.latestIndex >= 0
        let fire = node.timer.fireNanos
        let latest = node.timer.latestNanos
        if wasTolerant == (latest != fire) {
            node.fire = fire
            node.latest = latest
            if wasTolerant {
                tolerantByFire.update(node)
                tolerantByLatest.update(node)
            } else {
                exact.update(node)
            }
        } else {
            remove(node)
            node.fire = fire
            node.latest = latest
            insert(node)
        }
    }

    /// The timers due at `now`, in fire order: CF's snapshot of due timers for one pass.
    func due(at now: Int64) -> [EVTimer] {
        var nodes: [TimerNode] = []
        exact.collect(firingBy: now, into: &nodes)
        tolerantByFire.collect(firingBy: now, into: &nodes)
        if nodes.count > 1 { nodes.sort(by: TimerNode.firesBefore) }
        return nodes.map(\.timer)
    }

    /// Every timer in the queue, in no particular order.
    var allTimers: [EVTimer] { (exact.nodes + tolerantByFire.nodes).map(\.timer) }
}

/// A binary min-heap of ``TimerNode``s that records each node's index in the node, so that
/// removal and re-sorting are O(log n).
struct NodeHeap {
    enum Kind { case fire, latest }
    let kind: Kind
    private(set) var nodes: [TimerNode] = []

    init(kind: Kind) { self.kind = kind }

    var isEmpty: Bool { nodes.isEmpty }
    var count: Int { nodes.count }
    var first: TimerNode? { nodes.first }

    mutating func insert(_ node: TimerNode) {
        nodes.append(node)
        setIndex(node, nodes.count - 1)
        siftUp(nodes.count - 1)
    }

    mutating func remove(_ node: TimerNode) {
        let index = indexOf(node)
        guard index >= 0 else { return }
        setIndex(node, -1)
        let last = nodes.removeLast()
        guard index < nodes.count else { return }
        nodes[index] = last
        setIndex(last, index)
        restore(index)
    }

    mutating func update(_ node: TimerNode) {
        let index = indexOf(node)
        if index >= 0 { restore(index) }
    }

    /// Appends every node whose fire instant is at or before `now` (a pruned walk: a node
    /// that fires later hides its whole subtree, since its children fire later still).
    func collect(firingBy now: Int64, into result: inout [TimerNode]) {
        guard let first = nodes.first, first.fire <= now else { return }
        if nodes.count == 1 || (nodes.count == 2 && nodes[1].fire > now) {
            result.append(first)
            return
        }
        var stack = [0]
        while let index = stack.popLast() {
            guard nodes[index].fire <= now else { continue }
            result.append(nodes[index])
            let left = 2 * index + 1
            if left < nodes.count { stack.append(left) }
            if left + 1 < nodes.count { stack.append(left + 1) }
        }
    }

    /// The smallest key among nodes whose timer is not firing; `.max` if none. The top
    /// answers unless its timer is firing (only inside a nested run), when a walk descends
    /// through firing nodes only.
    func earliestKeyNotFiring() -> Int64 {
        guard let top = nodes.first else { return .max }
        if !top.timer.isFiring { return key(top) }
        var best = Int64.max
        var stack = [0]
        while let index = stack.popLast() {
            let node = nodes[index]
            guard key(node) < best else { continue }
            if !node.timer.isFiring {
                best = key(node)
                continue
            }
            let left = 2 * index + 1
            if left < nodes.count { stack.append(left) }
            if left + 1 < nodes.count { stack.append(left + 1) }
        }
        return best
    }

    private func key(_ node: TimerNode) -> Int64 { kind == .fire ? node.fire : node.latest }

    private func before(_ a: TimerNode, _ b: TimerNode) -> Bool {
        kind == .fire ? TimerNode.firesBefore(a, b) : TimerNode.dueBefore(a, b)
    }

    private func indexOf(_ node: TimerNode) -> Int {
        kind == .fire ? node.fireIndex : node.latestIndex
    }

    private func setIndex(_ node: TimerNode, _ index: Int) {
        if kind == .fire { node.fireIndex = index } else { node.latestIndex = index }
    }

    private mutating func restore(_ index: Int) {
        if index > 0, before(nodes[index], nodes[(index - 1) / 2]) {
            siftUp(index)
        } else {
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var index = start
        let node = nodes[index]
        while index > 0 {
            let parent = (index - 1) / 2
            guard before(node, nodes[parent]) else { break }
            nodes[index] = nodes[parent]
            setIndex(nodes[index], index)
            index = parent
        }
        nodes[index] = node
        setIndex(node, index)
    }

    private mutating func siftDown(_ start: Int) {
        var index = start
        let node = nodes[index]
        let count = nodes.count
        while true {
            let left = 2 * index + 1
            guard left < count else { break }
            var child = left
            if left + 1 < count, before(nodes[left + 1], nodes[left]) { child = left + 1 }
            guard before(nodes[child], node) else { break }
            nodes[index] = nodes[child]
            setIndex(nodes[index], index)
            index = child
        }
        nodes[index] = node
        setIndex(node, index)
    }
}
