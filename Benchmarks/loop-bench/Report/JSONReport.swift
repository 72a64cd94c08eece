import Foundation

/// The results as JSON (`--json`): the machine, the plan, and every row with each peer's
/// values, median, min, max and the ratios.
struct JSONReport: Encodable {
    struct Figure: Encodable {
        var median: Double?
        var min: Double?
        var max: Double?
        var values: [Double]?
        var unavailable: String?
        var pending: String?
    }

    struct Line: Encodable {
        var workload: String
        var metric: String
        var unit: String
        var goal: String?
        var goalMet: Bool?
        var peers: [String: Figure]
        var ratios: [String: Double]
        /// RunLoopKit ÷ libev of each interleaved pair, where the row was measured so.
        var pairRatios: Figure?
        var bestPeer: String?
        var ratioToBestPeer: Double?
    }

    var machine: Machine
    var quick: Bool
    var repetitions: Int
    var rows: [Line]

    init(machine: Machine, plan: Plan, quick: Bool, rows: [Row]) {
        self.machine = machine
        self.quick = quick
        repetitions = plan.repetitions
        self.rows = rows.map { row in
            var peers: [String: Figure] = [:]
            for (peer, cell) in row.cells {
                switch cell {
                case .measured(let s):
                    peers[peer.rawValue] = Figure(median: s.median.finite, min: s.min.finite, max: s.max.finite,
                                                  values: s.values.compactMap(\.finite))
                case .unavailable(let reason):
                    peers[peer.rawValue] = Figure(unavailable: reason)
                case .pending(let issue):
                    peers[peer.rawValue] = Figure(pending: issue)
                }
            }
            var ratios: [String: Double] = [:]
            for peer in Peer.others { if let r = row.ratio(to: peer) { ratios["RunLoopKit/\(peer.rawValue)"] = r } }
            return Line(workload: row.workload, metric: row.metric, unit: row.unit, goal: row.goal,
                        goalMet: row.goalMet, peers: peers, ratios: ratios,
                        pairRatios: row.pairRatios.map { Figure(median: $0.median.finite, min: $0.min.finite, max: $0.max.finite,
                                                                values: $0.values.compactMap(\.finite)) }, bestPeer: row.bestPeer?.peer.rawValue,
                        ratioToBestPeer: row.bestPeer?.ratio)
        }
    }

    func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

extension Double {
    /// The value, or nil when NaN or infinite (JSON has neither).
    var finite: Double? { isFinite ? self : nil }
}
