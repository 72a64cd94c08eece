import CLibevBench

/// Interleaved pairs for the rows whose goal is a ratio to libev (or to another peer, such
/// as the jobs rows' best Swift peer): RunLoopKit, libev, RunLoopKit, libev, …, each
/// measurement a child process of its own (``Children``), so that each side starts from a
/// fresh heap and a neighbour's burst on the shared machine hits both sides of a pair alike.
/// The row's ratio is the median of the pairs' ratios. Both children of a pair run bound to
/// one CPU (pair i on the i-th allowed CPU): neither side is moved between CPUs in the middle
/// of its window, which empties its caches, and each pair's two sides meet the same CPU's
/// neighbours (`--unpinned` turns this off; PROFILING.md, "How rows are judged").
///
/// A workload that measures so gives its `child` entry point a peer key first, then its
/// own arguments; the child prints its figures as numbers on one line (``report(_:)``).
enum Pairs {
    /// What the pairs measured: each side's figures per pair (`runLoopKit[pair][index]`).
    struct Outcome {
        /// The peer RunLoopKit is paired with.
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

    /// Runs `plan.pairs` pairs of `workload` children with `arguments`, RunLoopKit and
    /// `other`, for the peers that `plan.peers` holds (one side alone when the other is left
    /// out, e.g. by `--peers`), each pair bound to one CPU unless `plan.pinsPairs` is false.
    static func run(_ workload: String, plan: Plan, arguments: [String], against other: Peer = .libev) -> Outcome {
        var outcome = Outcome(other: other)
        for pair in 0..<plan.pairs {
            // Children inherit the CPUs of the thread that starts them.
            if plan.pinsPairs { _ = lb_pin_to_cpu(Int32(pair)) }
            defer { if plan.pinsPairs { lb_unpin() } }
            for peer in [Peer.runLoopKit, other] where plan.peers.contains(peer) {
                let figures = Children.figures(workload, [peer.key] + arguments)
                if peer == .runLoopKit { outcome.runLoopKit.append(figures) } else { outcome.others.append(figures) }
            }
        }
        return outcome
    }

    /// The peers a workload still measures in this process, as before: all but the pair.
    static func others(_ peers: [Peer]) -> [Peer] {
        peers.filter { $0 != .runLoopKit && $0 != .libev }
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

    /// The largest count every peer is measured at: above it a workload measures only the
    /// pairs, as the other peers would take minutes per measurement (Foundation needs about
    /// 2 s for one pass over 100k due timers and 10 s to invalidate them) or their own memory.
    static let largestForAllPeers = 100_000

    /// The peers a workload measures in this process at `count`: ``others(_:)``, or none
    /// above ``largestForAllPeers``.
    static func others(_ peers: [Peer], count: Int) -> [Peer] {
        count <= largestForAllPeers ? others(peers) : []
    }

    /// `unavailable` with, above ``largestForAllPeers``, a reason for every peer outside the
    /// pairs that has none yet.
    static func unavailable(_ unavailable: [Peer: String] = [:], count: Int) -> [Peer: String] {
        guard count > largestForAllPeers else { return unavailable }
        var reasons = unavailable
        for peer in others(Peer.allCases) where reasons[peer] == nil {
            reasons[peer] = "only RunLoopKit and libev are measured above N = \(largestForAllPeers.grouped) (the other peers would take minutes per measurement)"
        }
        return reasons
    }
}

extension Row {
    /// The row with RunLoopKit's and the paired peer's cells from `pairs`' figure `index`
    /// and its ratio to that peer the median of the pair ratios.
    func paired(_ pairs: Pairs.Outcome, figure index: Int) -> Row {
        var row = self
        for (peer, values) in pairs.values(index) { row.cells[peer] = .measured(Summary(values)) }
        row.pairedPeer = pairs.other
        row.pairRatios = pairs.ratios(index)
        return row
    }
}
