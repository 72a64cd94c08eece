import CLibevBench
import Foundation

/// The cost of watching a loop (issue 28): CPU per fire of N repeating 1 ms timers (the fire
/// workload) with the loop recording nothing, its metrics (``EVRunLoop/recordsMetrics``), a
/// trace (``EVRunLoop/trace``) or stall reports (``EVRunLoop/reportStalls(over:_:)``, a
/// threshold no callout reaches), RunLoopKit only. The four run as interleaved quadruples of
/// fresh child processes, each bound to one CPU (as ``Pairs`` does), and each ratio row is
/// the median of their ratios; callgrind counts the instructions per fire of each, which
/// the machine's load does not move. The stall watchdog also has its wakes of the loop
/// counted (the loop's own statistics, which the watchdog's thread does not enter).
enum Observing {
    static let name = "observing"
    static let count = 1_000
    static let kinds: [TimerRun.Observing] = [.nothing, .metrics, .trace, .stallWatch]

    static let others = ChildRuns.runLoopKitOnly("metrics, traces and stall reports are RunLoopKit's own")

    static func label(_ kind: TimerRun.Observing) -> String {
        switch kind {
        case .nothing: "metrics off, no trace"
        case .metrics: "metrics on"
        case .trace: "a trace set"
        case .stallWatch: "stall reports on"
        }
    }

    /// Each kind's ratio to no recording: its name in the metric, and its goal (and bound).
    /// The watchdog publishes through atomics and never signals the loop: with one 100 ms
    /// timer, the loop wakes 10 times a second with it as without.
    static let ratios: [(kind: TimerRun.Observing, name: String, goal: String?, bound: Double?)] = [
        (.metrics, "metrics on ÷ off", "≤ 1.15× off", 1.15),
        (.trace, "a trace set ÷ none", "≤ 2× none", 2),
        (.stallWatch, "stall reports on ÷ off", nil, nil),
    ]

    static func measure(_ plan: Plan) -> [Row] {
        guard plan.peers.contains(.runLoopKit) else { return [] }
        var cpu: [TimerRun.Observing: [Double]] = [:]
        var wakes: [TimerRun.Observing: [Double]] = [:]
        for group in 0..<plan.pairs {
            if plan.pinsPairs { _ = lb_pin_to_cpu(Int32(group)) }
            defer { if plan.pinsPairs { lb_unpin() } }
            for kind in kinds {
                let figures = ChildRuns.figures(name, [String(kind.rawValue), String(count), String(plan.throughputSeconds)], expected: 2)
                cpu[kind, default: []].append(figures[0])
                wakes[kind, default: []].append(figures[1])
            }
        }
        var rows = kinds.map { kind in
            Row.make(name, "CPU per fire, N = \(count.grouped), \(label(kind))", unit: "ns",
                     values: [.runLoopKit: cpu[kind]!], unavailable: others)
        }
        rows += ratios.map { ratio in
            ratioRow("CPU per fire, \(ratio.name), N = \(count.grouped) (interleaved)",
                     zip(cpu[ratio.kind]!, cpu[.nothing]!).map { $0 / $1 }, goal: ratio.goal, bound: ratio.bound)
        }
        for kind in [TimerRun.Observing.nothing, .stallWatch] {
            rows.append(Row.make(name, "loop wakes per second, one 100 ms repeating timer, \(label(kind))", unit: "wakes/s",
                                 values: [.runLoopKit: wakes[kind]!], unavailable: others))
        }
        rows.append(ratioRow("loop wakes per second, one 100 ms repeating timer, stall reports on ÷ off (interleaved)",
                             zip(wakes[.stallWatch]!, wakes[.nothing]!).map { $0 / $1 },
                             goal: "no extra wake of the loop (≤ 1.01×)", bound: 1.01))
        return rows + instructionRows(plan)
    }

    static func ratioRow(_ metric: String, _ ratios: [Double], goal: String?, bound: Double?) -> Row {
        var row = Row.make(name, metric, unit: "×", goal: goal, values: [.runLoopKit: ratios], unavailable: others)
        if let bound { row.goalMet = row.cells[.runLoopKit]?.summary.map { $0.median <= bound } }
        return row
    }

    /// Instructions per fire of each kind, and the ratios, from callgrind (``Instructions``).
    static func instructionRows(_ plan: Plan) -> [Row] {
        var unavailable = ""
        guard let callgrind = Callgrind(unavailable: &unavailable), let timers = plan.instructionFireTimers.first else {
            FileHandle.standardError.write(Data("loop-bench: observing instructions \(unavailable)\n".utf8))
            return []
        }
        var counts: [TimerRun.Observing: Double] = [:]
        for kind in kinds {
            counts[kind] = callgrind.instructionsPerOperation(
                in: "measuredFire", probe: "fire-observed",
                [String(timers), String(plan.instructionFireMilliseconds), String(kind.rawValue)], peer: .runLoopKit)
        }
        return kinds.map { kind in
            Row.make(name, "instructions per fire, N = \(timers.grouped), \(label(kind)) (under valgrind)",
                     unit: "instructions", values: [.runLoopKit: [counts[kind]!]], unavailable: others)
        } + ratios.map { ratio in
            ratioRow("instructions per fire, \(ratio.name), N = \(timers.grouped)", [counts[ratio.kind]! / counts[.nothing]!],
                     goal: ratio.goal, bound: ratio.bound)
        }
    }

    /// A child: `[kind, timer count, seconds]`; after an untimed run (at most 0.2 s) that
    /// warms the process, three timed runs of a third of `seconds` each; prints the lowest
    /// CPU per fire (as the fire workload's children), then, for no recording and stall
    /// reports, the loop's wakes per second with one 100 ms repeating timer for `seconds`
    /// (at least 0.5 s): 10 a second unless something else wakes the loop (0 for the others).
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
        var wakes = 0.0
        if kind == .nothing || kind == .stallWatch {
            var idle = TimerRun(interval: 0.1, firstAfter: [0.1], seconds: Swift.max(seconds, 0.5))
            idle.observing = kind
            let outcome = idle.run(on: .runLoopKit, log: nil)
            wakes = Double(outcome.loopWakes) / outcome.stats.seconds
        }
        Pairs.report([best, wakes])
    }
}
