/// One line of the results table: one metric of one workload, measured on every peer.
struct Row: Codable, Sendable {
    /// What a peer's cell holds: repeated measurements, or why the peer cannot do it.
    enum Cell: Codable, Sendable {
        case measured(Summary)
        case unavailable(reason: String)

        var summary: Summary? {
            if case .measured(let summary) = self { return summary }
            return nil
        }
    }

    /// Which way is better, to pick each row's best peer.
    enum Better: String, Codable, Sendable {
        case lower, higher
        /// No best peer: the figure is not a score (lateness within a tolerance, signed overshoot).
        case neither
    }

    /// The workload's name (what `--only` takes).
    let workload: String
    /// What is measured, with its parameters ("CPU per fire, N = 1k").
    let metric: String
    let unit: String
    var better: Better
    /// The goal for this metric, if it has one, and whether RunLoopKit meets it.
    var goal: String?
    var goalMet: Bool?
    var cells: [Peer: Cell]
    /// RunLoopKit ÷ ``pairedPeer`` of each interleaved pair (``Pairs``), on the rows measured
    /// so; its median is the row's ratio to that peer.
    var pairRatios: Summary?
    /// The peer of the interleaved pairs: libev, or for the jobs rows a Swift peer.
    var pairedPeer = Peer.libev

    /// RunLoopKit's median over `peer`'s (the paired peer: the median of the pairs' ratios);
    /// nil where either is missing or not positive.
    func ratio(to peer: Peer) -> Double? {
        if peer == pairedPeer, let pairRatios { return pairRatios.median.isFinite ? pairRatios.median : nil }
        guard let ours = cells[.runLoopKit]?.summary?.median,
              let theirs = cells[peer]?.summary?.median, ours > 0, theirs > 0, ours.isFinite, theirs.isFinite
        else { return nil }
        return ours / theirs
    }

    /// The best measured peer other than RunLoopKit, and RunLoopKit's ratio to it (nil when
    /// either median is zero); nil when the row has no better direction or other peer.
    var bestPeer: (peer: Peer, ratio: Double?)? {
        let candidates = Peer.allCases.compactMap { peer -> (Peer, Double)? in
            guard peer != .runLoopKit, let median = cells[peer]?.summary?.median, median.isFinite, median >= 0 else { return nil }
            return (peer, median)
        }
        let best = switch better {
        case .lower: candidates.min { $0.1 < $1.1 }
        case .higher: candidates.max { $0.1 < $1.1 }
        case .neither: (Peer, Double)?.none
        }
        return best.map { ($0.0, ratio(to: $0.0)) }
    }

    /// Whether RunLoopKit is at least as good as the best other peer; nil without one.
    var aheadOfBestPeer: Bool? {
        guard let best = bestPeer, let ours = cells[.runLoopKit]?.summary?.median,
              let theirs = cells[best.peer]?.summary?.median else { return nil }
        return better == .higher ? ours >= theirs : ours <= theirs
    }

    /// A row whose measured peers come from `values` and whose other peers say `unavailable`.
    static func make(
        _ workload: String, _ metric: String, unit: String, better: Better = .lower,
        values: [Peer: [Double]], unavailable: [Peer: String] = [:]
    ) -> Row {
        var cells = values.mapValues { Cell.measured(Summary($0)) }
        for (peer, reason) in unavailable { cells[peer] = .unavailable(reason: reason) }
        return Row(workload: workload, metric: metric, unit: unit, better: better, cells: cells)
    }

    /// Gives the row the goal `goal` on RunLoopKit ÷ `peer`: at most `bound` for a cost, at
    /// least `bound` for a rate.
    func withRatioGoal(_ goal: String, to peer: Peer, bound: Double) -> Row {
        withGoal(goal, met: ratio(to: peer).map { better == .higher ? $0 >= bound : $0 <= bound })
    }

    /// Gives the row the goal `goal`, met when RunLoopKit's figures pass `met`; unknown
    /// without them.
    func withGoal(_ goal: String, met: (Summary) -> Bool) -> Row {
        withGoal(goal, met: cells[.runLoopKit]?.summary.map(met))
    }

    /// Gives the row the goal `goal` and the verdict `met` (nil: unknown).
    func withGoal(_ goal: String, met: Bool?) -> Row {
        var row = self
        row.goal = goal
        row.goalMet = met
        return row
    }
}
