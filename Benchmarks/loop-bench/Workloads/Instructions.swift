import Foundation

/// Workload 13: instructions per fire, per create + add and per invalidate, RunLoopKit and
/// raw libev side by side, counted by valgrind's callgrind in loop-bench's own probes
/// (``Callgrind``, ``Probe``): figures that do not move with the machine's load, unlike the
/// wall and CPU times of the fire and schedule workloads they count. One run per figure.
enum Instructions {
    static let name = "instructions"

    /// One row: what is counted, the probe that does it, the measured function, the goal.
    struct Count {
        var metric: String
        var mode: String
        var arguments: [String]
        var function: String
        var goal: String
        var bound: Double
    }

    static func counts(_ plan: Plan) -> [Count] {
        let fires = plan.instructionFireTimers.map { count in
            Count(metric: "instructions per fire, N = \(count.grouped) (1 ms timers, the loop behind them under valgrind)",
                  mode: "fire-libev", arguments: [String(count), String(plan.instructionFireMilliseconds)],
                  function: "measuredFire", goal: "≤ 1.5× libev", bound: 1.5)
        }
        return fires + plan.instructionTimers.flatMap { count in
            [
                Count(metric: "instructions per create + add, N = \(count.grouped)", mode: "schedule", arguments: [String(count)],
                      function: "measuredAdd", goal: "≤ 6× libev", bound: 6),
                Count(metric: "instructions per invalidate, N = \(count.grouped)", mode: "schedule", arguments: [String(count)],
                      function: "measuredInvalidate", goal: "≤ 3× libev", bound: 3),
            ]
        }
    }

    static let others: [Peer: String] = Dictionary(uniqueKeysWithValues: Peer.allCases
        .filter { $0 != .runLoopKit && $0 != .libev }
        .map { ($0, "instructions are counted for RunLoopKit and raw libev only") })

    static func measure(_ plan: Plan) -> [Row] {
        var unavailable = ""
        let callgrind = Callgrind(unavailable: &unavailable)
        if callgrind == nil { FileHandle.standardError.write(Data("loop-bench: instructions \(unavailable)\n".utf8)) }
        return counts(plan).map { count in
            var values: [Peer: [Double]] = [:]
            var skipped: [Peer: String] = others
            for peer in [Peer.runLoopKit, .libev] where plan.peers.contains(peer) {
                if let callgrind {
                    values[peer] = [callgrind.instructionsPerOperation(in: count.function, probe: count.mode, count.arguments, peer: peer)]
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
