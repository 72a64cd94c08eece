/// A timer's nodes, one per mode it is in. The first sits inline (most timers are in one
/// mode), so a timer in one mode allocates no array.
struct TimerNodes {
    private(set) var first: TimerNode?
    private(set) var others: [TimerNode] = []

    var isEmpty: Bool { first == nil }

    /// The node in `state`'s queue, if any.
    func node(in state: ModeState) -> TimerNode? {
        if let first, first.state === state { return first }
        return others.first { $0.state === state }
    }

    mutating func append(_ node: TimerNode) {
        if first == nil { first = node } else { others.append(node) }
    }

    /// Removes and returns the node in `state`'s queue, if any.
    mutating func remove(in state: ModeState) -> TimerNode? {
        if let node = first, node.state === state {
            first = others.isEmpty ? nil : others.removeFirst()
            return node
        }
        guard let index = others.firstIndex(where: { $0.state === state }) else { return nil }
        return others.remove(at: index)
    }

    mutating func removeAll() {
        first = nil
        others = []
    }

    /// Calls `body` with each node, without reference counting (the nodes stay in the
    /// list while `body` runs: it must not add or remove nodes of this timer).
    func forEachUnretained(_ body: (TimerNode) -> Void) {
        guard let first else { return }
        Unmanaged.passUnretained(first)._withUnsafeGuaranteedRef(body)
        guard !others.isEmpty else { return }
        others.withUnsafeBufferPointer { nodes in
            for node in nodes { Unmanaged.passUnretained(node)._withUnsafeGuaranteedRef(body) }
        }
    }

    /// Every node.
    var all: [TimerNode] { first.map { [$0] + others } ?? [] }
}
