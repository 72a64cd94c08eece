import Foundation

/// The cost of watching a loop (issue 28): CPU per fire of the fire workload with RunLoopKit
/// recording nothing, metrics, a trace or stall reports, in interleaved quadruples of pinned
/// processes (ratio rows: the median of their ratios), and callgrind's instructions per fire.
enum Observing: Workload {
    static let name = "observing"
    static let summary = "the fire workload at N = 1,000 with RunLoopKit's loop recording nothing, its metrics, or a trace (issue 28): CPU per fire in interleaved triples of child processes, their ratios, and callgrind's instructions per fire."
    static let count = 1_000
    static let kinds: [TimerRun.Observing] = [.nothing, .metrics, .trace, .stallWatch]

    static let others = Peer.allBut(.runLoopKit, reason: "metrics, traces and stall reports are RunLoopKit's own")

    static func label(_ kind: TimerRun.Observing) -> String {
        switch kind {
        case .nothing: "metrics off, no trace"
        case .metrics: "metrics on"
        case .trace: "a trace set"
        case .stallWatch: "stall reports on"
        }
    }

    /// Each kind's ratio to no recording: its name in the metric, and its goal (and bound). The
    /// stall watchdog publishes through atomics and never wakes the loop.
    static let ratios: [(kind: TimerRun.Observing, name: String, goal: String?, bound: Double?)] = [
        (.metrics, "metrics on ÷ off", "≤ 1.15× off", 1.15),
        (.trace, "a trace set ÷ none", "≤ 2× none", 2),
        (.stallWatch, "stall reports on ÷ off", nil, nil),
    ]

    static func measure(_ plan: Plan) -> [Row] {
        guard plan.peers.contains(.runLoopKit) else { return [] }
        let figures = Children.interleaved(name, repetitions: plan.pairs, pinned: plan.pinsPairs, kinds) {
            [String($0.rawValue), String(count), String(plan.throughputSeconds)]
        }
        let (cpu, wakes) = (figures.mapValues { $0.map { $0[0] } }, figures.mapValues { $0.map { $0[1] } })
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
        let row = Row.make(name, metric, unit: "×", values: [.runLoopKit: ratios], unavailable: others)
        guard let goal, let bound else { return row }
        return row.withGoal(goal) { $0.median <= bound }
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
            counts[kind] = callgrind.count(in: "measuredFire", probe: "fire-observed",
                                           [String(timers), String(plan.instructionFireMilliseconds), String(kind.rawValue)],
                                           peer: .runLoopKit).perOperation
        }
        return kinds.map { kind in
            Row.make(name, "instructions per fire, N = \(timers.grouped), \(label(kind)) (under valgrind)",
                     unit: "instructions", values: [.runLoopKit: [counts[kind]!]], unavailable: others)
        } + ratios.map { ratio in
            ratioRow("instructions per fire, \(ratio.name), N = \(timers.grouped)", [counts[ratio.kind]! / counts[.nothing]!],
                     goal: ratio.goal, bound: ratio.bound)
        }
    }

    /// A child: `[kind, timer count, seconds]`; prints the lowest CPU per fire as the fire
    /// workload's children do, then (no recording and stall reports only, else 0) the loop's
    /// wakes per second with one 100 ms repeating timer for `seconds` (at least 0.5 s).
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
