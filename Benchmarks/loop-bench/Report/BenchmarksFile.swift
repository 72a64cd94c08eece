/// The text of `BENCHMARKS.md`: how to reproduce, the machine and date, the table, and
/// what each workload measures.
enum BenchmarksFile {
    static func render(machine: Machine, plan: Plan, quick: Bool, workloads: [Workload], rows: [Row]) -> String {
        var text = """
        # RunLoopKit benchmarks

        RunLoopKit, raw libev driven from C, and Foundation's `RunLoop`/`Timer` (with
        CoreFoundation's `CFRunLoop` API where Foundation has no spelling), measured on the
        same workloads in one process run by `loop-bench`. Absolute times on a shared machine
        are noise; the ratios, measured side by side, are the point.

        ## How to reproduce

        ```
        make bench                                      # full run, rewrites this file
        swift run -c release --package-path Benchmarks loop-bench           # table on stdout
        swift run -c release --package-path Benchmarks loop-bench --quick   # smoke test (CI)
        swift run -c release --package-path Benchmarks loop-bench --only coalescing,wake --json
        ```

        ## Machine

        - Date: \(machine.date)\(quick ? " (--quick run: smoke-test numbers)" : "")
        - CPU: \(machine.cpu), \(machine.cores) cores; load average at the end (1, 5, 15 min): \(machine.load)
        - OS: \(machine.kernel)
        - libev \(machine.libev), \(machine.swift), release build; RunLoopKit at \(machine.revision)
        - Each figure: median of \(plan.repetitions) repetitions, ± half the range as % of the median.
          Peers interleave within each repetition; each measurement runs on a fresh thread.

        ## Results

        Ratios are RunLoopKit's median / the peer's median: below 1 means RunLoopKit is lower
        (for times, costs, wakes, lateness and memory, lower is better; for fires/s, higher).


        """
        text += MarkdownTable.render(rows)
        text += goals(rows, quick: quick)
        text += "\n## Workloads\n\n"
        for workload in workloads {
            text += "- **\(workload.name)**: \(workload.summary)\n"
        }
        text += """

        Notes:
        - Wakes: RunLoopKit's `statistics.wakeups`, libev's `ev_check` callouts, CF's
          `afterWaiting` observer callouts. Voluntary context switches come from
          `getrusage(RUSAGE_THREAD)` on the loop thread for all three.
        - Lateness is measured against each timer's own grid (first fire + k × interval) on
          `CLOCK_MONOTONIC`; the aligned phase is `CLOCK_REALTIME` modulo the grid.
        - Foundation on Linux ignores timer tolerance (CF discards it); libev has no
          per-timer tolerance, only the loop-wide `ev_set_timeout_collect_interval`.
        - CF's `CFRunLoopPerformBlock` (behind `RunLoop.perform`) does not wake the loop;
          the Foundation perform row calls `CFRunLoopWakeUp` after it.

        """
        return text
    }

    /// The rows that carry one of the issue's goals, one line each: the figure, the ratios,
    /// and whether RunLoopKit meets the goal. Profiles of the misses: `Benchmarks/PROFILING.md`.
    static func goals(_ rows: [Row], quick: Bool) -> String {
        let withGoals = rows.filter { $0.goal != nil }
        guard !withGoals.isEmpty else { return "" }
        var text = "\n## Goals\n\n"
        if quick { text += "A --quick run: short windows (wakes/s moves in steps of 1/1.2 s), so these verdicts are only indicative.\n\n" }
        for row in withGoals {
            var details: [String] = []
            var figure = "–"
            if let summary = row.cells[.runLoopKit]?.summary {
                figure = "\(NumberFormat.value(summary.median)) \(row.unit)"
                if summary.values.count > 1 {
                    figure = "median " + figure
                    details.append("range \(NumberFormat.value(summary.min))–\(NumberFormat.value(summary.max)) over \(summary.values.count) repetitions")
                }
            }
            for peer in Peer.others {
                if let ratio = row.ratio(to: peer) { details.append("\(NumberFormat.value(ratio))× \(peer.rawValue)") }
            }
            let verdict = row.goalMet.map { $0 ? "met" : "**missed**" } ?? "not measured"
            text += "- \(row.workload), \(row.metric): \(figure)"
            text += details.isEmpty ? "" : " (\(details.joined(separator: "; ")))"
            text += " — goal \(row.goal!): \(verdict)\n"
        }
        text += "\nWhat limits the missed goals, with profiles: `Benchmarks/PROFILING.md`.\n"
        return text
    }
}
