import ArgumentParser
import Foundation

/// `loop-bench`: RunLoopKit, raw libev (C) and Foundation's RunLoop on the same workloads,
/// in one process run, with the ratios RunLoopKit / peer.
@main
struct LoopBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loop-bench",
        abstract: "RunLoopKit vs raw libev vs Foundation's RunLoop, side by side, with ratios.",
        discussion: "Workloads: \(Workload.all.map(\.name).joined(separator: ", ")).")

    @Flag(help: "A short run of every workload (seconds in all): a smoke test, not numbers to quote.")
    var quick = false

    @Flag(help: "Print the results as JSON instead of a Markdown table.")
    var json = false

    @Option(help: ArgumentHelp("Run only these workloads (comma-separated names).", valueName: "names"))
    var only: String?

    @Option(help: ArgumentHelp("Also write the report (machine, date, table, goals, how to reproduce) to this Markdown file.", valueName: "path"))
    var write: String?

    @Option(help: "Repetitions of each measurement (default: 5, or 2 with --quick).")
    var repetitions: Int?

    @Option(help: ArgumentHelp("Measure only these peers (comma-separated: runloopkit, libev, foundation), e.g. for profiling.", valueName: "peers"))
    var peers: String?

    @Option(help: .hidden)
    var memoryChild: String?

    @Option(help: .hidden)
    var memoryTimers = 100_000

    func validate() throws {
        if let names = selectedNames {
            let unknown = names.filter { name in !Workload.all.contains { $0.name == name } }
            guard unknown.isEmpty else {
                throw ValidationError("unknown workload \(unknown.joined(separator: ", ")); choose from \(Workload.all.map(\.name).joined(separator: ", "))")
            }
        }
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let memoryChild, Peer(key: memoryChild) == nil { throw ValidationError("unknown peer \(memoryChild)") }
        if let peers, peers.split(separator: ",").contains(where: { Peer(key: String($0)) == nil }) {
            throw ValidationError("unknown peer in \(peers); choose from runloopkit, libev, foundation")
        }
    }

    private var selectedNames: [String]? {
        only.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func run() throws {
        if let memoryChild, let peer = Peer(key: memoryChild) {
            MemoryPerTimer.child(peer, count: memoryTimers)
            return
        }
        var plan = quick ? Plan.quick : Plan.full
        if let repetitions { plan.repetitions = repetitions }
        if let peers { plan.peers = peers.split(separator: ",").compactMap { Peer(key: String($0)) } }
        let chosen = selectedNames.map { names in Workload.all.filter { names.contains($0.name) } } ?? Workload.all

        let started = Date()
        // The revision is read before measuring: `swift run` (and `make bench`) build
        // right before the run, so the tree at this moment is the one measured.
        let revision = Machine.revision()
        var rows: [Row] = []
        for workload in chosen {
            let begin = Date()
            log("loop-bench: \(workload.name)…")
            rows += workload.measure(plan)
            log("loop-bench: \(workload.name) took \(String(format: "%.1f", Date().timeIntervalSince(begin))) s")
        }
        log("loop-bench: done in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")

        let machine = Machine.current(revision: revision)
        if json {
            print(JSONReport(machine: machine, plan: plan, quick: quick, rows: rows).encoded())
        } else {
            print(MarkdownTable.render(rows))
        }
        if let write {
            let text = BenchmarksFile.render(machine: machine, plan: plan, quick: quick,
                                             workloads: chosen, rows: rows)
            try text.write(toFile: write, atomically: true, encoding: .utf8)
            log("loop-bench: wrote \(write)")
        }
    }

    private func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
