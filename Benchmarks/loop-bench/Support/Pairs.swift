import CLibevBench

/// Interleaved pairs for the rows whose goal is a ratio to libev (or to another peer, such
/// as the jobs rows' best Swift peer): RunLoopKit, libev, RunLoopKit, libev, …, each
/// measurement a child process of its own (``Children``), so
/// that each side starts from a fresh heap and a neighbour's burst on the shared machine
/// hits both sides of a pair alike. The row's ratio is the median of the pairs' ratios.
/// Both children of a pair run bound to one CPU (pair i on the i-th allowed CPU, so the
/// pairs take turns on every CPU): neither side is moved between CPUs in the middle of its
/// window, which empties its caches, and each pair's two sides meet the same CPU's
/// neighbours (`--unpinned` turns this off; PROFILING.md, "Ratio rows that reproduce").
///
/// A workload that measures so gives its `child` entry point a peer key first, then its
/// own arguments; the child prints its figures as numbers on one line.
enum Pairs {
    /// What `count` pairs measured: each side's figures per pair (`figures[pair][index]`).
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
                let output = Children.run(workload) { _ in [peer.key] + arguments }[0]
                let figures = output.split(whereSeparator: \.isWhitespace).map { Double($0) }
                guard !figures.isEmpty, !figures.contains(nil) else {
                    fatalError("loop-bench: a \(workload) child for \(peer.rawValue) printed \(output.debugDescription)")
                }
                if peer == .runLoopKit { outcome.runLoopKit.append(figures.map { $0! }) } else { outcome.others.append(figures.map { $0! }) }
            }
        }
        return outcome
    }

    /// The peers a workload still measures in this process, as before: all but the pair.
    static func others(_ peers: [Peer]) -> [Peer] {
        peers.filter { $0 != .runLoopKit && $0 != .libev }
    }

    /// Prints a child's figures on one line, for ``run(_:count:peers:arguments:)``.
    static func report(_ figures: [Double]) {
        print(figures.map { String($0) }.joined(separator: " "))
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
