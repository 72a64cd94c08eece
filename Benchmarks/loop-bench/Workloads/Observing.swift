import CLibevBench
import Foundation

/// The cost of watching a loop (issue 28): CPU per fire of N repeating 1 ms timers (the fire
/// workload) with the loop recording nothing, its metrics (``EVRunLoop/recordsMetrics``) or
/// a trace (``EVRunLoop/trace``), RunLoopKit only. The three run as interleaved triples of
/// fresh child processes, each triple bound to one CPU (as ``Pairs`` does), and each
/// ratio row is the median of the triples' ratios; callgrind counts the instructions per
/// fire of each, which the machine's load does not move.
enum Observing {
    static let name = "observing"
    static let count = 1_000
    static let kinds: [TimerRun.Observing] = [.nothing, .metrics, .trace]

    static let others: [Peer: String] = Dictionary(uniqueKeysWithValues: Peer.allCases
        .filter { $0 != .runLoopKit }
        .map { ($0, "metrics and traces are RunLoopKit's own") })

    static func label(_ kind: TimerRun.Observing) -> String {
        switch kind {
        case .nothing: "metrics off, no trace"
        case .metrics: "metrics on"
        case .trace: "a trace set"
        }
    }

    static func measure(_ plan: Plan) -> [Row] {
        guard plan.peers.contains(.runLoopKit) else { return [] }
        var cpu: [TimerRun.Observing: [Double]] = [:]
        for triple in 0..<plan.pairs {
            if plan.pinsPairs { _ = lb_pin_to_cpu(Int32(triple)) }
            defer { if plan.pinsPairs { lb_unpin() } }
            for kind in kinds {
                let output = Children.run(name) { _ in [String(kind.rawValue), String(count), String(plan.throughputSeconds)] }[0]
                guard let figure = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    fatalError("loop-bench: an observing child printed \(output.debugDescription)")
                }
                cpu[kind, default: []].append(figure)
            }
        }
        var rows = kinds.map { kind in
            Row.make(name, "CPU per fire, N = \(count.grouped), \(label(kind))", unit: "ns",
                     values: [.runLoopKit: cpu[kind]!], unavailable: others)
        }
        let off = cpu[.nothing]!
        rows.append(ratioRow("CPU per fire, metrics on ÷ off, N = \(count.grouped) (interleaved triples)",
                             zip(cpu[.metrics]!, off).map { $0 / $1 }, goal: "≤ 1.15× off", bound: 1.15))
        rows.append(ratioRow("CPU per fire, a trace set ÷ none, N = \(count.grouped) (interleaved triples)",
                             zip(cpu[.trace]!, off).map { $0 / $1 }, goal: "≤ 2× none", bound: 2))
        rows += instructionRows(plan)
        return rows
    }

    static func ratioRow(_ metric: String, _ ratios: [Double], goal: String, bound: Double) -> Row {
        var row = Row.make(name, metric, unit: "×", goal: goal, values: [.runLoopKit: ratios], unavailable: others)
        row.goalMet = row.cells[.runLoopKit]?.summary.map { $0.median <= bound }
        return row
    }

    /// Instructions per fire of each kind, and the ratios, from callgrind (``Instructions``).
    static func instructionRows(_ plan: Plan) -> [Row] {
        var unavailable = ""
        guard let callgrind = Callgrind(unavailable: &unavailable), let timers = plan.instructionFireTimers.first else {
            FileHandle.standardError.write(Data("loop-bench: observing instructions \(unavailable)\n".utf8))
            return []
        }
        let counts = kinds.map { kind in
            callgrind.instructionsPerOperation(
                in: "measuredFire", probe: "fire-observed",
                [String(timers), String(plan.instructionFireMilliseconds), String(kind.rawValue)], peer: .runLoopKit)
        }
        var rows = zip(kinds, counts).map { kind, instructions in
            Row.make(name, "instructions per fire, N = \(timers.grouped), \(label(kind)) (under valgrind)",
                     unit: "instructions", values: [.runLoopKit: [instructions]], unavailable: others)
        }
        rows.append(ratioRow("instructions per fire, metrics on ÷ off, N = \(timers.grouped)", [counts[1] / counts[0]],
                             goal: "≤ 1.15× off", bound: 1.15))
        rows.append(ratioRow("instructions per fire, a trace set ÷ none, N = \(timers.grouped)", [counts[2] / counts[0]],
                             goal: "≤ 2× none", bound: 2))
        return rows
    }

    /// A child: `[kind, timer count, seconds]`; after an untimed run (at most 0.2 s) that
    /// warms the process, three timed runs of a third of `seconds` each; prints the lowest
    /// CPU per fire (as the fire workload's children).
    static func child(_ arguments: [String]) {
        guard arguments.count == 3, let raw = Int(arguments[0]), let kind = TimerRun.Observing(rawValue: raw),
              let count = Int(arguments[1]), let seconds = Double(arguments[2]) else {
            fatalError("loop-bench observing child: expected a kind, a count and seconds, got \(arguments)")
        }
        var run = TimerRun(interval: FireThroughput.interval, firstAfter: Array(repeating: FireThroughput.interval, count: count),
                           seconds: Swift.min(seconds, 0.2))
        run.observing = kind
        _ = run.run(on: .runLoopKit, log: nil)
        run.seconds = seconds / 3
        let best = (0..<3).map { _ in run.run(on: .runLoopKit, log: nil).stats.cpuPerFire }.min()!
        Pairs.report([best])
    }
}
