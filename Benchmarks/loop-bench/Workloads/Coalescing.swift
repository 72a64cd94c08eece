
/// Workload 3: 1,000 timers at 0.2 s, random phases, tolerance 0 and 0.1 s: wakes/s, CPU %,
/// lateness. Each run is a process of its own, so that the switches count only its threads,
/// not those an earlier workload left parked.
enum Coalescing: Workload {
    static let name = "coalescing"
    static let summary = "1,000 timers, 0.2 s interval, random phases, tolerance 0 and 0.1 s (libev: ev_set_timeout_collect_interval, Dispatch: leeway); wakes/s = voluntary context switches of the process (getrusage RUSAGE_SELF), CPU %, lateness."
    static let count = 1_000
    static let interval = 0.2

    /// The timers' first fires, the same for every peer.
    static func phases() -> [Double] {
        var random = SeededRandom(seed: 3)
        return (0..<count).map { _ in Double.random(in: 0.001...interval, using: &random) }
    }

    /// A child: `[peer key, tolerance, seconds]`; prints the process's wakes/s (voluntary
    /// context switches), fires/s, CPU % and each fire's lateness (ns).
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 2)
        let (tolerance, seconds) = (a[0], a[1])
        let run = TimerRun(interval: interval, firstAfter: phases(), tolerance: tolerance, seconds: seconds)
        let log = FireLog(capacity: Int(Double(count) / interval * (seconds + 1.5)))
        let outcome = run.run(on: peer, log: log)
        let stats = outcome.stats
        Pairs.report([stats.switchesPerSecond, stats.firesPerSecond, stats.cpuPercent]
            + log.lateness(firstFire: outcome.firstFire, interval: Int64(interval * 1e9), slack: 1_000_000))
    }

    static func measure(_ plan: Plan) -> [Row] {
        [0.0, 0.1].flatMap { tolerance in
            let label = tolerance == 0 ? "tolerance 0" : "tolerance 0.1 s"
            let allowed = tolerance * 1e9
            // wakes/s, fires/s, CPU %, lateness median and max, % of fires later than their
            // tolerance, the latest's overshoot and the median overshoot of those (NaN: none).
            let figures = plan.repeated(plan.peers, figures: 8) { peer in
                let outcome = Children.figures(name, [peer.key, String(tolerance), String(plan.coalescingSeconds)])
                let lateness = Summary(Array(outcome.dropFirst(3)))
                let late = lateness.values.filter { $0 > allowed }
                ChartData.shared.setSamples("lateness \(label)", peer, lateness.values.map { $0 / 1e3 })
                return Array(outcome.prefix(3)) + [
                    lateness.median / 1e3, lateness.max / 1e3, Double(late.count) / Double(lateness.values.count) * 100,
                    (lateness.max - allowed) / 1e3, late.isEmpty ? .nan : (Summary(late).median - allowed) / 1e3,
                ]
            }
            for (peer, values) in figures[0] { ChartData.shared.add("wakes", peer, x: tolerance, y: Summary(values).median) }
            let wakes = Row.make(name, "wakes/s (voluntary context switches), \(label)", unit: "wakes/s", values: figures[0])
            // Within the tolerance, lateness is the point of coalescing, not a score.
            let latenessBetter: Row.Better = tolerance > 0 ? .neither : .lower
            let lateMax = Row.make(name, "lateness max, \(label)", unit: "µs", better: latenessBetter, values: figures[4])
            let rows = [
                tolerance > 0 ? wakes.withGoal("≤ 11/s") { $0.median <= 11 } : wakes,
                Row.make(name, "fires/s delivered (asked 5,000), \(label)", unit: "fires/s", better: .neither, values: figures[1]),
                Row.make(name, "CPU, \(label)", unit: "%", values: figures[2]),
                Row.make(name, "lateness median, \(label)", unit: "µs", better: latenessBetter, values: figures[3]),
                tolerance > 0 ? lateMax.withGoal("≤ 100,000 µs (the tolerance)") { $0.max <= 100_000 } : lateMax,
            ]
            guard tolerance > 0 else { return rows }
            return rows + [
                Row.make(name, "fires later than their tolerance, \(label)", unit: "%", values: figures[5]),
                Row.make(name, "latest fire past its tolerance (max lateness − 0.1 s), \(label)", unit: "µs",
                         better: .neither, values: figures[6]),
                Row.make(name, "median overshoot of the fires past their tolerance, \(label)", unit: "µs", values: figures[7]),
            ]
        }
    }
}
