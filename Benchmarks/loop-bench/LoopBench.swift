import ArgumentParser
import Foundation

/// `loop-bench`: RunLoopKit against raw libev (C), Foundation's RunLoop, Dispatch, SwiftNIO,
/// `Task.sleep` and `AsyncTimerSequence` on the same workloads, in one process run, with the
/// ratios RunLoopKit / peer.
@main
struct LoopBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loop-bench",
        abstract: "RunLoopKit vs libev, Foundation, Dispatch, NIO, Task.sleep and AsyncTimerSequence, side by side, with ratios.",
        discussion: "Workloads: \(Workloads.all.map { $0.name }.joined(separator: ", ")).")

    @Flag(help: "A short run of every workload (seconds in all): a smoke test, not numbers to quote.")
    var quick = false

    @Flag(help: "Print the results as JSON instead of a Markdown table.")
    var json = false

    @Option(help: ArgumentHelp("Run only these workloads (comma-separated names).", valueName: "names"))
    var only: String?

    @Option(help: ArgumentHelp("Also write the report (machine, date, table, goals, how to reproduce) to this Markdown file, and its SVG charts next to it.", valueName: "path"))
    var write: String?

    @Option(help: "Repetitions of each measurement (default: 5, or 1 with --quick).")
    var repetitions: Int?

    @Option(help: "Interleaved RunLoopKit/libev pairs on the rows whose goal is a ratio to libev (default: 7, or 2 with --quick).")
    var pairs: Int?

    @Flag(help: "Let the children of the interleaved pairs run on any CPU (by default both children of a pair are bound to one CPU).")
    var unpinned = false

    @Option(help: ArgumentHelp("Measure only these peers (comma-separated: \(Peer.keys)), e.g. for profiling.", valueName: "peers"))
    var peers: String?

    @Option(help: ArgumentHelp("Run one workload once on one peer and print its figures (for profiling; --peers runloopkit or libev): \(Probe.help).", valueName: "mode"))
    var probe: String?

    @Argument(help: ArgumentHelp("The probe mode's arguments.", valueName: "probe-arguments"))
    var probeArguments: [String] = []

    @Flag(help: "Count the gated instruction rows under callgrind and fail when one exceeds its threshold in Benchmarks/Thresholds.json by more than 2 %.")
    var check = false

    @Flag(help: "Count the gated instruction rows and write them to Benchmarks/Thresholds.json as the new thresholds, then check.")
    var writeThresholds = false

    /// In a child process (``Children``): the workload whose `child` entry point to run.
    @Option(help: .hidden)
    var child: String?

    /// In a child process: the arguments of the workload's `child` entry point.
    @Option(help: .hidden)
    var childArgument: [String] = []

    func validate() throws {
        let names = Workloads.all.map { $0.name }
        if let unknown = selectedNames?.filter({ !names.contains($0) }), !unknown.isEmpty {
            throw ValidationError("unknown workload \(unknown.joined(separator: ", ")); choose from \(names.joined(separator: ", "))")
        }
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let pairs, pairs < 1 { throw ValidationError("--pairs must be at least 1") }
        if let child, !names.contains(child) {
            throw ValidationError("no workload \(child) to run a child of")
        }
        if let peers, peers.split(separator: ",").contains(where: { Peer(key: String($0)) == nil }) {
            throw ValidationError("unknown peer in \(peers); choose from \(Peer.keys)")
        }
        if let probe, let problem = Probe.problem(mode: probe, arguments: probeArguments, peers: chosenPeers ?? [.runLoopKit]) {
            throw ValidationError(problem)
        }
        if probe == nil, !probeArguments.isEmpty {
            throw ValidationError("unexpected arguments \(probeArguments.joined(separator: " ")) (they belong to --probe)")
        }
    }

    /// The peers `--peers` names.
    private var chosenPeers: [Peer]? {
        peers.map { $0.split(separator: ",").compactMap { Peer(key: String($0)) } }
    }

    private var selectedNames: [String]? {
        only.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func run() throws {
        if let child, let workload = Workloads.all.first(where: { $0.name == child }) {
            workload.child(childArgument)
            return
        }
        if check || writeThresholds {
            try Gates.run(write: writeThresholds)
            return
        }
        if let probe {
            Probe.run(mode: probe, arguments: probeArguments, peer: chosenPeers?[0] ?? .runLoopKit)
            return
        }
        var plan = quick ? Plan.quick : Plan.full
        if let repetitions { plan.repetitions = repetitions }
        if let pairs { plan.pairs = pairs }
        if unpinned { plan.pinsPairs = false }
        if let chosenPeers { plan.peers = chosenPeers }
        let chosen = selectedNames.map { names in Workloads.all.filter { names.contains($0.name) } } ?? Workloads.all

        let started = Date()
        // The revision is read before measuring: `swift run` (and `make bench`) build
        // right before the run, so the tree at this moment is the one measured.
        let revision = Machine.revision()
        let rows = chosen.flatMap { workload in
            let begin = Date()
            log("loop-bench: \(workload.name)…")
            defer { log("loop-bench: \(workload.name) took \(String(format: "%.1f", Date().timeIntervalSince(begin))) s") }
            return workload.measure(plan)
        }
        log("loop-bench: done in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")

        let machine = Machine.current(revision: revision)
        if json {
            print(JSONReport(machine: machine, quick: quick, repetitions: plan.repetitions, rows: rows).encoded())
        } else {
            print(MarkdownTable.render(rows))
        }
        if let write {
            let charts = Charts.all(data: ChartData.shared)
            let text = BenchmarksFile.render(machine: machine, plan: plan, quick: quick,
                                             workloads: chosen, rows: rows, charts: charts, reportPath: write)
            try text.write(toFile: write, atomically: true, encoding: .utf8)
            log("loop-bench: wrote \(write)")
            for chart in charts {
                let path = Charts.path(of: chart, nextTo: write)
                try chart.svg.write(toFile: path, atomically: true, encoding: .utf8)
                log("loop-bench: wrote \(path)")
            }
        }
    }

    private func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
