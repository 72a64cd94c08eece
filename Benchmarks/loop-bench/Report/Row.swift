/// One line of the results table: one metric of one workload, measured on every peer.
struct Row: Codable, Sendable {
    /// What a peer's cell holds: repeated measurements, why the peer cannot do it, or the
    /// issue that will bring it (a place kept, never a figure).
    enum Cell: Codable, Sendable {
        case measured(Summary)
        case unavailable(reason: String)
        case pending(String)

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
    /// The unit of every value in the row ("ns", "wakes/s", ...).
    let unit: String
    /// Which way is better.
    var better: Better
    /// The issue's goal for this metric, if it has one.
    var goal: String?
    /// Whether RunLoopKit meets `goal`, decided by the workload; nil without a goal.
    var goalMet: Bool?
    var cells: [Peer: Cell]
    /// RunLoopKit ÷ ``pairedPeer`` of each interleaved pair (``Pairs``), on the rows measured
    /// so; its median is the row's ratio to that peer.
    var pairRatios: Summary?
    /// The peer of the interleaved pairs: libev, or for the jobs rows a Swift peer.
    var pairedPeer = Peer.libev

    init(workload: String, metric: String, unit: String, better: Better, goal: String? = nil, cells: [Peer: Cell]) {
        self.workload = workload
        self.metric = metric
        self.unit = unit
        self.better = better
        self.goal = goal
        self.cells = cells
    }

    /// RunLoopKit's median over `peer`'s median (to the paired peer on a row measured in
    /// pairs: the median of the pair ratios); nil where either is missing or not positive (a
    /// ratio of signed figures such as an overshoot below zero means nothing).
    func ratio(to peer: Peer) -> Double? {
        if peer == pairedPeer, let pairRatios { return pairRatios.median.isFinite ? pairRatios.median : nil }
        guard let ours = cells[.runLoopKit]?.summary?.median,
              let theirs = cells[peer]?.summary?.median, ours > 0, theirs > 0, ours.isFinite, theirs.isFinite
        else { return nil }
        return ours / theirs
    }

    /// The best measured peer other than RunLoopKit, and RunLoopKit's ratio to it (nil when
    /// either median is zero, e.g. no fire late at all); nil when the row has no better
    /// direction or no other peer measured it.
    var bestPeer: (peer: Peer, ratio: Double?)? {
        let candidates = Peer.others.compactMap { peer -> (Peer, Double)? in
            guard let median = cells[peer]?.summary?.median, median.isFinite, median >= 0 else { return nil }
            return (peer, median)
        }
        let best: (Peer, Double)?
        switch better {
        case .lower: best = candidates.min { $0.1 < $1.1 }
        case .higher: best = candidates.max { $0.1 < $1.1 }
        case .neither: best = nil
        }
        guard let best else { return nil }
        return (best.0, ratio(to: best.0))
    }

    /// Gives the row the goal `goal` on RunLoopKit ÷ `peer`: met when the ratio is at most
    /// `bound` (a cost) or at least `bound` (a rate, `better == .higher`); unknown when
    /// either peer has no figure.
    func withRatioGoal(_ goal: String, to peer: Peer, bound: Double) -> Row {
        var row = self
        row.goal = goal
        row.goalMet = ratio(to: peer).map { better == .higher ? $0 >= bound : $0 <= bound }
        return row
    }

    /// Whether RunLoopKit is at least as good as the best other peer; nil without one.
    var aheadOfBestPeer: Bool? {
        guard let best = bestPeer, let ours = cells[.runLoopKit]?.summary?.median,
              let theirs = cells[best.peer]?.summary?.median else { return nil }
        return better == .higher ? ours >= theirs : ours <= theirs
    }
}

/// Builds rows from per-peer lists of repeated values.
extension Row {
    /// A row whose measured peers come from `values` and whose other peers say `unavailable`
    /// (or `pending`, for a place kept for a later issue).
    static func make(
        _ workload: String, _ metric: String, unit: String, better: Better = .lower, goal: String? = nil,
        values: [Peer: [Double]], unavailable: [Peer: String] = [:], pending: [Peer: String] = [:]
    ) -> Row {
        var cells: [Peer: Cell] = [:]
        for (peer, list) in values { cells[peer] = .measured(Summary(list)) }
        for (peer, reason) in unavailable { cells[peer] = .unavailable(reason: reason) }
        for (peer, issue) in pending { cells[peer] = .pending(issue) }
        return Row(workload: workload, metric: metric, unit: unit, better: better, goal: goal, cells: cells)
    }
}
