/// Interleaved pairs for the rows whose goal is a ratio to libev (or another peer): each
/// side a child process of its own, so that it starts from a fresh heap and a neighbour's
/// burst hits both sides alike; the row's ratio is the median of the pairs' ratios. Both
/// children of a pair are bound to one CPU, so that neither loses its caches to a move
/// (`--unpinned` turns this off). A child gets a peer key, then its workload's arguments.
enum Pairs {
    /// What the pairs measured: each side's figures per pair (`runLoopKit[pair][index]`).
    struct Outcome {
        var other: Peer = .libev
        var runLoopKit: [[Double]] = []
        var others: [[Double]] = []

        /// RunLoopKit's and the other peer's values of figure `index`, over the pairs.
        func values(_ index: Int) -> [Peer: [Double]] {
            var values: [Peer: [Double]] = [:]
            if !runLoopKit.isEmpty { values[.runLoopKit] = runLoopKit.map { $0[index] } }
            if !others.isEmpty { values[other] = others.map { $0[index] } }
            return values
        }

        /// RunLoopKit ÷ the other peer of figure `index` in each pair; nil unless both sides ran.
        func ratios(_ index: Int) -> Summary? {
            guard !runLoopKit.isEmpty, runLoopKit.count == others.count else { return nil }
            return Summary(zip(runLoopKit, others).map { $0[index] / $1[index] })
        }
    }

    /// Runs `plan.pairs` pairs of `workload` children, RunLoopKit and `other` (those of
    /// `plan.peers`), each pair bound to one CPU unless `plan.pinsPairs` is false.
    static func run(_ workload: String, plan: Plan, arguments: [String], against other: Peer = .libev) -> Outcome {
        let figures = Children.interleaved(workload, repetitions: plan.pairs, pinned: plan.pinsPairs,
                                           [Peer.runLoopKit, other].filter(plan.peers.contains)) { [$0.key] + arguments }
        return Outcome(other: other, runLoopKit: figures[.runLoopKit] ?? [], others: figures[other] ?? [])
    }

    /// A child's arguments: a peer key, then `count` numbers; stops the benchmark on others.
    static func arguments(_ arguments: [String], of workload: String, numbers count: Int) -> (Peer, [Double]) {
        let numbers = arguments.dropFirst().compactMap { Double($0) }
        guard arguments.count == count + 1, numbers.count == count, let peer = Peer(key: arguments[0]) else {
            fatalError("loop-bench \(workload) child: expected a peer and \(count) numbers, got \(arguments)")
        }
        return (peer, numbers)
    }

    /// Prints a child's figures on one line, for ``run(_:plan:arguments:against:)``.
    static func report(_ figures: [Double]) {
        print(figures.map { String($0) }.joined(separator: " "))
    }

    /// The largest count every peer is measured at: above it only the pairs, as the other
    /// peers would take minutes per measurement.
    static let largestForAllPeers = 100_000

    /// The peers a workload still measures in this process, as before: all but the pair, and
    /// none at a `count` above ``largestForAllPeers``.
    static func others(_ peers: [Peer], count: Int = 0) -> [Peer] {
        count <= largestForAllPeers ? peers.filter { $0 != .runLoopKit && $0 != .libev } : []
    }

    /// `unavailable` with, above ``largestForAllPeers``, a reason for every unpaired peer.
    static func unavailable(_ unavailable: [Peer: String] = [:], count: Int) -> [Peer: String] {
        guard count > largestForAllPeers else { return unavailable }
        let reason = "only RunLoopKit and libev are measured above N = \(largestForAllPeers.grouped) (the other peers would take minutes per measurement)"
        return unavailable.merging(Peer.allBut(.runLoopKit, .libev, reason: reason)) { own, _ in own }
    }
}

extension Row {
    /// The row with the pairs' cells of figure `index`, its ratio the median of the pairs'.
    func paired(_ pairs: Pairs.Outcome, figure index: Int) -> Row {
        var row = self
        for (peer, values) in pairs.values(index) { row.cells[peer] = .measured(Summary(values)) }
        row.pairedPeer = pairs.other
        row.pairRatios = pairs.ratios(index)
        return row
    }
}
