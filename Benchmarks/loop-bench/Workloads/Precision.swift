/// Workload 4a: one 10 ms repeating timer; lateness of each fire after its scheduled time.
enum Precision: Workload {
    static let name = "precision"
    static let summary = "one 10 ms repeating timer; lateness after each scheduled fire."
    static let interval = 0.01

    static func measure(_ plan: Plan) -> [Row] {
        let run = TimerRun(interval: interval, firstAfter: [interval],
                           seconds: Double(plan.precisionFires) * interval + interval / 2)
        let lateness = plan.repeated(plan.peers, figures: 2) { peer in
            let log = FireLog(capacity: plan.precisionFires + 10)
            let outcome = run.run(on: peer, log: log)
            let lateness = Summary(log.lateness(firstFire: outcome.firstFire, interval: Int64(interval * 1e9), slack: 1_000_000))
            ChartData.shared.setSamples("lateness 10 ms timer", peer, lateness.values.map { $0 / 1e3 })
            return lateness.microseconds
        }
        return [
            Row.make(name, "10 ms timer lateness median", unit: "µs", values: lateness[0]),
            Row.make(name, "10 ms timer lateness p99", unit: "µs", values: lateness[1]),
        ]
    }
}
