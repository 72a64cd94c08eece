import Foundation

/// Workload 13: instructions per fire, create + add and invalidate, RunLoopKit and libev,
/// counted by callgrind in loop-bench's probes: figures the machine's load does not move.
enum Instructions: Workload {
    static let name = "instructions"
    static let summary = "instructions per fire (N repeating 1 ms timers), per create + add and per invalidate (random 1–2 s one-shots), RunLoopKit and raw libev, counted by valgrind's callgrind inside the measured functions of `loop-bench --probe` (skipped, with a note in the row, when valgrind is not installed)."

    /// One row: what is counted, the probe that does it, the measured function, the goal.
    typealias Count = (metric: String, mode: String, arguments: [String], function: String, goal: String, bound: Double)

    static func counts(_ plan: Plan) -> [Count] {
        let fires = plan.instructionFireTimers.map { count in
            (metric: "instructions per fire, N = \(count.grouped) (1 ms timers, the loop behind them under valgrind)",
             mode: "fire-libev", arguments: [String(count), String(plan.instructionFireMilliseconds)],
             function: "measuredFire", goal: "≤ 1.5× libev", bound: 1.5)
        }
        return fires + plan.instructionTimers.flatMap { count in
            [
                (metric: "instructions per create + add, N = \(count.grouped)", mode: "schedule", arguments: [String(count)],
                 function: "measuredAdd", goal: "≤ 6× libev", bound: 6),
                (metric: "instructions per invalidate, N = \(count.grouped)", mode: "schedule", arguments: [String(count)],
                 function: "measuredInvalidate", goal: "≤ 3× libev", bound: 3),
            ]
        }
    }

    static let others = Peer.allBut(.runLoopKit, .libev, reason: "instructions are counted for RunLoopKit and raw libev only")

    static func measure(_ plan: Plan) -> [Row] {
        var unavailable = ""
        let callgrind = Callgrind(unavailable: &unavailable)
        if callgrind == nil { FileHandle.standardError.write(Data("loop-bench: instructions \(unavailable)\n".utf8)) }
        return counts(plan).map { count in
            var values: [Peer: [Double]] = [:]
            var skipped: [Peer: String] = others
            for peer in [Peer.runLoopKit, .libev] where plan.peers.contains(peer) {
                if let callgrind {
                    values[peer] = [callgrind.count(in: count.function, probe: count.mode, count.arguments, peer: peer).perOperation]
                } else {
                    skipped[peer] = unavailable
                }
            }
            let goal = callgrind == nil ? "\(count.goal) (\(unavailable))" : count.goal
            return Row.make(name, count.metric, unit: "instructions", values: values, unavailable: skipped)
                .withRatioGoal(goal, to: .libev, bound: count.bound)
        }
    }
}
