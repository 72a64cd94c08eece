/// Workload 3: 1,000 timers at a 0.2 s interval with random phases, with tolerance 0 and
/// 0.1 s. Wakes per second (voluntary context switches of the process: every time a thread
/// doing the work went to sleep; see ``ProcessWindow``), CPU %, and per-fire lateness.
/// libev's nearest equivalent of tolerance is `ev_set_timeout_collect_interval`, Dispatch's
/// is the leeway; CF on Linux and NIO have none.
enum Coalescing {
    static let name = "coalescing"
    static let count = 1_000
    static let interval = 0.2

    static func measure(_ plan: Plan) -> [Row] {
        var random = SeededRandom(seed: 3)
        let phases = (0..<count).map { _ in Double.random(in: 0.001...interval, using: &random) }
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
            let run = TimerRun(interval: interval, firstAfter: phases, tolerance: tolerance,
                               seconds: plan.coalescingSeconds)
            let capacity = Int(Double(count) / interval * (plan.coalescingSeconds + 1.5))
            let label = tolerance == 0 ? "tolerance 0" : "tolerance 0.1 s"
            for _ in 0..<plan.repetitions {
                for peer in plan.peers {
                    let log = FireLog(capacity: capacity)
                    let outcome = run.run(on: peer, log: log)
                    let lateness = Summary(log.lateness(
                        firstFire: outcome.firstFire, interval: Int64(interval * 1e9), slack: 1_000_000))
                    wakes[peer, default: []].append(outcome.stats.switchesPerSecond)
                    fires[peer, default: []].append(outcome.stats.firesPerSecond)
                    cpu[peer, default: []].append(outcome.stats.cpuPercent)
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
