import Foundation

/// Workload 3: 1,000 timers at a 0.2 s interval with random phases, with tolerance 0 and
/// 0.1 s. Wakes per second (voluntary context switches of the process: every time a thread
/// doing the work went to sleep; see ``ProcessWindow``), CPU %, and per-fire lateness.
/// Each run is a child process of its own (``child(_:)``), so that the switches count only
/// its threads, not those an earlier workload of the parent left parked (Dispatch's
/// workers, NIO's loop thread).
/// libev's nearest equivalent of tolerance is `ev_set_timeout_collect_interval`, Dispatch's
/// is the leeway; CF on Linux and NIO have none.
enum Coalescing {
    static let name = "coalescing"
    static let count = 1_000
    static let interval = 0.2

    /// One run's figures, as a child prints them.
    struct Outcome: Codable {
        var switchesPerSecond: Double
        var firesPerSecond: Double
        var cpuPercent: Double
        /// Each fire's lateness (ns).
        var lateness: [Double]
    }

    /// The timers' first fires, the same for every peer.
    static func phases() -> [Double] {
        var random = SeededRandom(seed: 3)
        return (0..<count).map { _ in Double.random(in: 0.001...interval, using: &random) }
    }

    /// A child: `[peer key, tolerance, seconds]`; runs the timers here and prints the
    /// ``Outcome`` as JSON.
    static func child(_ arguments: [String]) {
        guard arguments.count == 3, let peer = Peer(key: arguments[0]), let tolerance = Double(arguments[1]),
              let seconds = Double(arguments[2]) else {
            fatalError("loop-bench coalescing child: expected a peer, a tolerance and seconds, got \(arguments)")
        }
        let run = TimerRun(interval: interval, firstAfter: phases(), tolerance: tolerance, seconds: seconds)
        let log = FireLog(capacity: Int(Double(count) / interval * (seconds + 1.5)))
        let outcome = run.run(on: peer, log: log)
        let result = Outcome(
            switchesPerSecond: outcome.stats.switchesPerSecond, firesPerSecond: outcome.stats.firesPerSecond,
            cpuPercent: outcome.stats.cpuPercent,
            lateness: log.lateness(firstFire: outcome.firstFire, interval: Int64(interval * 1e9), slack: 1_000_000))
        guard let json = try? JSONEncoder().encode(result) else { fatalError("loop-bench coalescing child: cannot encode") }
        print(String(decoding: json, as: UTF8.self))
    }

    /// Runs `peer`'s timers with `tolerance` for `seconds` in a child process.
    static func runInChild(_ peer: Peer, tolerance: Double, seconds: Double) -> Outcome {
        let output = Children.run(name) { _ in [peer.key, String(tolerance), String(seconds)] }[0]
        guard let outcome = try? JSONDecoder().decode(Outcome.self, from: Data(output.utf8)) else {
            fatalError("loop-bench: a coalescing child printed \(output.prefix(200).debugDescription)")
        }
        return outcome
    }

    static func measure(_ plan: Plan) -> [Row] {
        var rows: [Row] = []
        for tolerance in [0.0, 0.1] {
            var wakes: [Peer: [Double]] = [:]
            var fires: [Peer: [Double]] = [:]
            var cpu: [Peer: [Double]] = [:]
            var lateMedian: [Peer: [Double]] = [:]
            var lateMax: [Peer: [Double]] = [:]
            var beyond: [Peer: [Double]] = [:]
            var overshoot: [Peer: [Double]] = [:]
            var typicalOvershoot: [Peer: [Double]] = [:]
            let label = tolerance == 0 ? "tolerance 0" : "tolerance 0.1 s"
            for _ in 0..<plan.repetitions {
                for peer in plan.peers {
                    let outcome = runInChild(peer, tolerance: tolerance, seconds: plan.coalescingSeconds)
                    let lateness = Summary(outcome.lateness)
                    wakes[peer, default: []].append(outcome.switchesPerSecond)
                    fires[peer, default: []].append(outcome.firesPerSecond)
                    cpu[peer, default: []].append(outcome.cpuPercent)
                    lateMedian[peer, default: []].append(lateness.median / 1e3)
                    lateMax[peer, default: []].append(lateness.max / 1e3)
                    let allowed = tolerance * 1e9
                    let late = lateness.values.filter { $0 > allowed }
                    overshoot[peer, default: []].append((lateness.max - allowed) / 1e3)
                    if !late.isEmpty {
                        typicalOvershoot[peer, default: []].append((Summary(late).median - allowed) / 1e3)
                    }
                    beyond[peer, default: []].append(Double(late.count) / Double(lateness.values.count) * 100)
                    ChartData.shared.setSamples("lateness \(label)", peer, lateness.values.map { $0 / 1e3 })
                }
            }
            for (peer, values) in wakes {
                ChartData.shared.add("wakes", peer, x: tolerance, y: Summary(values).median)
            }
            var wakeRow = Row.make(name, "wakes/s (voluntary context switches), \(label)", unit: "wakes/s",
                                   goal: tolerance > 0 ? "≤ 11/s" : nil, values: wakes)
            if tolerance > 0 { wakeRow.goalMet = wakeRow.cells[.runLoopKit]?.summary.map { $0.median <= 11 } }
            rows.append(wakeRow)
            rows.append(Row.make(name, "fires/s delivered (asked 5,000), \(label)", unit: "fires/s",
                                 better: .neither, values: fires))
            rows.append(Row.make(name, "CPU, \(label)", unit: "%", values: cpu))
            // Within the tolerance, lateness is the point of coalescing, not a score.
            let latenessBetter: Row.Better = tolerance > 0 ? .neither : .lower
            rows.append(Row.make(name, "lateness median, \(label)", unit: "µs", better: latenessBetter,
                                 values: lateMedian))
            var maxRow = Row.make(name, "lateness max, \(label)", unit: "µs", better: latenessBetter,
                                  goal: tolerance > 0 ? "≤ 100,000 µs (the tolerance)" : nil, values: lateMax)
            if tolerance > 0 { maxRow.goalMet = maxRow.cells[.runLoopKit]?.summary.map { $0.max <= 100_000 } }
            rows.append(maxRow)
            if tolerance > 0 {
                rows.append(Row.make(name, "fires later than their tolerance, \(label)", unit: "%",
                                     values: beyond))
                rows.append(Row.make(name, "latest fire past its tolerance (max lateness − 0.1 s), \(label)",
                                     unit: "µs", better: .neither, values: overshoot))
                rows.append(Row.make(name, "median overshoot of the fires past their tolerance, \(label)",
                                     unit: "µs", values: typicalOvershoot))
            }
        }
        return rows
    }
}
