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

    /// The workload's name (what `--only` takes).
    let workload: String
    /// What is measured, with its parameters ("CPU per fire, N = 1k").
    let metric: String
    /// The unit of every value in the row ("ns", "wakeups/s", ...).
    let unit: String
    /// The goal for this metric, if it has one.
    var goal: String?
    /// Whether RunLoopKit meets `goal`, decided by the workload; nil without a goal.
    var goalMet: Bool?
    var cells: [Peer: Cell]

    init(workload: String, metric: String, unit: String, goal: String? = nil, cells: [Peer: Cell]) {
        self.workload = workload
        self.metric = metric
        self.unit = unit
        self.goal = goal
        self.cells = cells
    }

    /// RunLoopKit's median over `peer`'s median; nil where either is missing or not positive
    /// (a ratio of signed figures such as an overshoot below zero means nothing).
    func ratio(to peer: Peer) -> Double? {
        guard let ours = cells[.runLoopKit]?.summary?.median,
              let theirs = cells[peer]?.summary?.median, ours > 0, theirs > 0, ours.isFinite, theirs.isFinite
        else { return nil }
        return ours / theirs
    }
}

/// Builds rows from per-peer lists of repeated values.
extension Row {
    /// A row whose measured peers come from `values` and whose other peers say `unavailable`.
    static func make(
        _ workload: String, _ metric: String, unit: String, goal: String? = nil,
        values: [Peer: [Double]], unavailable: [Peer: String] = [:]
    ) -> Row {
        var cells: [Peer: Cell] = [:]
        for (peer, list) in values { cells[peer] = .measured(Summary(list)) }
        for (peer, reason) in unavailable { cells[peer] = .unavailable(reason: reason) }
        return Row(workload: workload, metric: metric, unit: unit, goal: goal, cells: cells)
    }
}
