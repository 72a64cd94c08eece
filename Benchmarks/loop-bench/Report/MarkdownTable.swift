/// The results as a Markdown table: one row per metric, a column per peer, then the
/// ratios RunLoopKit / peer and the goal.
enum MarkdownTable {
    static func render(_ rows: [Row]) -> String {
        var lines = [
            "| Workload | Metric | Unit | RunLoopKit | libev (C) | Foundation | RunLoopKit / libev | RunLoopKit / Foundation | Goal |",
            "|---|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for row in rows {
            let goal = row.goal.map { goal in
                switch row.goalMet {
                case true?: "\(goal): met"
                case false?: "\(goal): **missed**"
                case nil: goal
                }
            } ?? ""
            let cells = [
                row.workload, row.metric, row.unit,
                NumberFormat.cell(row.cells[.runLoopKit]), NumberFormat.cell(row.cells[.libev]),
                NumberFormat.cell(row.cells[.foundation]),
                NumberFormat.ratio(row.ratio(to: .libev)), NumberFormat.ratio(row.ratio(to: .foundation)),
                goal,
            ]
            lines.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
