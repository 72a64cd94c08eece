/// The results as a Markdown table: a row per metric, a column per peer (the figure, then
/// RunLoopKit's ratio to it in brackets), the best peer and the goal; why a peer cannot do
/// a workload goes to numbered notes under the table, so the cells stay short.
enum MarkdownTable {
    static func render(_ rows: [Row]) -> String {
        var notes: [String] = []
        func note(_ text: String) -> Int {
            if let index = notes.firstIndex(of: text) { return index + 1 }
            notes.append(text)
            return notes.count
        }
        var lines = [
            "| Workload | Metric | Unit | " + Peer.allCases.map(\.rawValue).joined(separator: " | ")
                + " | Best peer: RunLoopKit ÷ it | Goal |",
            "|---|---|---|" + Peer.allCases.map { _ in "---:|" }.joined() + "---|---|",
        ]
        for row in rows {
            let verdict = row.goalMet.map { $0 ? ": met" : ": **missed**" } ?? ""
            let goal = row.goal.map { $0 + verdict } ?? ""
            let peerCells = Peer.allCases.map { peer -> String in
                switch row.cells[peer] {
                case .unavailable(let reason)?: return "n/a [\(note(reason))]"
                case let cell:
                    var text = NumberFormat.cell(cell)
                    if peer == row.pairedPeer, let pairs = row.pairRatios {
                        text += " [\(NumberFormat.pairs(pairs))]"
                    } else if peer != .runLoopKit, let ratio = row.ratio(to: peer) {
                        text += " [\(NumberFormat.ratio(ratio))]"
                    }
                    return text
                }
            }
            let best = row.bestPeer.map { "\($0.peer.rawValue): \(NumberFormat.ratio($0.ratio))" } ?? "–"
            let cells = [row.workload, row.metric, row.unit] + peerCells + [best, goal]
            lines.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        var text = lines.joined(separator: "\n") + "\n"
        if !notes.isEmpty {
            text += "\nn/a:\n"
            for (index, reason) in notes.enumerated() { text += "\(index + 1). \(reason)\n" }
        }
        return text
    }
}
