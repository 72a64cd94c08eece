import Foundation

/// The text of `BENCHMARKS.md`: how to reproduce, the machine and date, the table, the
/// charts, the goals, and what each workload measures.
enum BenchmarksFile {
    static func render(machine: Machine, plan: Plan, quick: Bool, workloads: [any Workload.Type], rows: [Row],
                       charts: [Charts.Chart], reportPath: String) -> String {
        let pinning = plan.pinsPairs ? ",\n  both children of a pair bound to one CPU (pair i on the i-th)" : ""
        var text = """
        # RunLoopKit benchmarks

        RunLoopKit against what a Swift program on Linux uses for timers and events today: raw
        libev driven from C, Foundation's `RunLoop`/`Timer` (with CoreFoundation's `CFRunLoop`
        API where Foundation has no spelling), Dispatch (`DispatchSourceTimer` with a leeway,
        read sources, a serial queue), SwiftNIO (one `EventLoop`), tasks looping on
        `Task.sleep`, and swift-async-algorithms' `AsyncTimerSequence`, measured on the same
        workloads in one process run by `loop-bench` (the `Benchmarks/` package). Absolute
        times on a shared machine are noise; the ratios, measured side by side, are the point.

        ## How to reproduce

        ```
        make bench                                      # full run, rewrites this file
        swift run -c release --package-path Benchmarks loop-bench           # table on stdout
        swift run -c release --package-path Benchmarks loop-bench --quick   # smoke test (CI)
        swift run -c release --package-path Benchmarks loop-bench --only coalescing,wake --json
        swift run -c release --package-path Benchmarks loop-bench --probe schedule 10000   # one workload, once (PROFILING.md)
        ```

        ## Machine

        - Date: \(machine.date)\(quick ? " (--quick run: smoke-test numbers)" : "")
        - CPU: \(machine.cpu), \(machine.cores) cores; load average at the end (1, 5, 15 min): \(machine.load)
        - OS: \(machine.kernel)
        - libev \(machine.libev), \(machine.swift), release build; RunLoopKit at \(machine.revision)
        - Each figure: median of \(plan.repetitions) repetitions, ± half the range as % of the median.
          Peers interleave within each repetition; each loop measurement runs on a fresh
          thread, the other peers on their own threads, after the process went quiet.
        - The workloads whose rows hold the goals that are ratios to libev (fire but its
          spread-interval row, schedule, pass, memory, descriptors): RunLoopKit and libev
          are measured in \(plan.pairs) interleaved pairs (schedule: \(plan.schedulePairs)): RunLoopKit,
          libev, RunLoopKit, libev, …, each measurement a fresh child process that warms up
          first (fire, schedule and pass: the lowest of three timed rounds)\(pinning); their cells
          are the medians over the pairs, and libev's bracket is the median of the pair ratios
          with the lowest and highest pair ratio in parentheses. Goals are judged on that
          median ratio. The other peers run in the parent as above.
        - Instruction rows: user-space instructions counted by valgrind's callgrind (the
          measured function only, `--toggle-collect`), which the machine's other load does
          not move; one run per figure.

        ## Results

        Each peer's cell: its median, and in brackets RunLoopKit's median ÷ the peer's: below
        1 means RunLoopKit is lower (for times, costs, wakes, lateness and memory, lower is
        better; for fires/s and calls/s, higher). "Best peer" is the best of the other six on
        that row (none where the figure is not a score, such as lateness within a tolerance).


        """
        text += MarkdownTable.render(rows)
        if !charts.isEmpty {
            text += "\n## Charts\n\n"
            for chart in charts {
                let file = URL(fileURLWithPath: Charts.path(of: chart, nextTo: reportPath)).lastPathComponent
                text += "![\(chart.caption)](\(file))\n\n"
            }
        }
        text += goals(rows, quick: quick)
        text += bestPeers(rows)
        text += "\n## Workloads\n\n"
        for workload in workloads {
            text += "- **\(workload.name)**: \(workload.summary)\n"
        }
        text += """

        Notes:
        - Wakes are counted the same way for every peer: voluntary context switches of the
          process (`getrusage(RUSAGE_SELF)`), i.e. each time a thread doing the work went to
          sleep; CPU is the process's (`CLOCK_PROCESS_CPUTIME_ID`). The thread that starts a
          run is blocked during its window and every other thread the benchmark made is idle,
          so the figures are those of the threads at work (seen per thread in
          `/proc/<pid>/task/*/status` during a run): the loop thread for RunLoopKit, libev and
          Foundation; for Dispatch, the thread that runs its timers and the workers that drain
          the queue (`com.apple.root.default-qos.overcommit` threads); the event loop thread
          (`NIO-ELT-…`) for NIO; for Task.sleep and AsyncTimerSequence, that same Dispatch
          timer thread (the global executor's delayed jobs are Dispatch timers on Linux) plus
          the concurrency pool's two threads (`com.apple.root.default-qos`).
        - Timers keep a steady rate on their own grid for every peer: NIO re-arms
          `scheduleTask(deadline:)` at the next grid point (its `scheduleRepeatedTask` counts
          the delay from the end of each run, so it drifts), tasks sleep `until:` the next grid
          point; an `AsyncTimerSequence` ticks on its own grid. NIO has no tolerance.
        - Lateness is measured against each timer's own grid (first fire + k × interval) on
          `CLOCK_MONOTONIC`; the aligned phase is `CLOCK_REALTIME` modulo the grid.
        - Foundation on Linux ignores timer tolerance (CF discards it); libev has no
          per-timer tolerance, only the loop-wide `ev_set_timeout_collect_interval`.
        - CF's `CFRunLoopPerformBlock` (behind `RunLoop.perform`) does not wake the loop;
          the Foundation perform row calls `CFRunLoopWakeUp` after it.
        - The machine workload counts each process's wakes itself (RunLoopKit: an
          `afterWaiting` observer; libev: an `ev_check` watcher; Dispatch: handler batches more
          than 200 µs apart), not context switches, so that the wakes of P processes can be
          lined up in time; each of its figures is one run of P processes, not a median.

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
                    details.append("range \(NumberFormat.value(summary.min))–\(NumberFormat.value(summary.max)) over \(summary.values.count) \(row.pairRatios == nil ? "repetitions" : "pairs")")
                }
            }
            for peer in [Peer.libev, .foundation] + (row.pairedPeer == .libev ? [] : [row.pairedPeer]) {
                if let ratio = row.ratio(to: peer) { details.append("\(NumberFormat.value(ratio))× \(peer.rawValue)") }
            }
            if let pairs = row.pairRatios, pairs.values.count > 1 {
                details.append("pair ratios \(NumberFormat.value(pairs.min))–\(NumberFormat.value(pairs.max)) over \(pairs.values.count) pairs")
            }
            let verdict = row.goalMet.map { $0 ? "met" : "**missed**" } ?? "not measured"
            text += "- \(row.workload), \(row.metric): \(figure)"
            text += details.isEmpty ? "" : " (\(details.joined(separator: "; ")))"
            text += " — goal \(row.goal!): \(verdict)"
            if let best = row.bestPeer, let ahead = row.aheadOfBestPeer {
                text += "; best peer \(best.peer.rawValue): \(NumberFormat.ratio(best.ratio)), RunLoopKit \(ahead ? "at or ahead" : "behind")"
            }
            text += "\n"
        }
        text += "\nWhat limits the missed goals, with profiles: `Benchmarks/PROFILING.md`.\n"
        return text
    }

    /// Per row with a best peer: that peer and RunLoopKit's ratio to it, and whether
    /// RunLoopKit is at or ahead of it.
    static func bestPeers(_ rows: [Row]) -> String {
        var text = "\n## Best peer per row\n\nRunLoopKit ÷ the best other peer (for fires/s and calls/s higher is better, for the rest lower).\n\n"
        for row in rows {
            guard let best = row.bestPeer, let ahead = row.aheadOfBestPeer else { continue }
            text += "- \(row.workload), \(row.metric): \(best.peer.rawValue), \(NumberFormat.ratio(best.ratio)) — RunLoopKit \(ahead ? "at or ahead" : "behind")\n"
        }
        return text
    }
}
