/// Workload 4a: one 10 ms repeating timer; lateness of each fire after its scheduled time.
enum Precision {
    static let name = "precision"
    static let interval = 0.01

    static func measure(_ plan: Plan) -> [Row] {
        var medians: [Peer: [Double]] = [:]
        var p99s: [Peer: [Double]] = [:]
        let run = TimerRun(interval: interval, firstAfter: [interval],
                           seconds: Double(plan.precisionFires) * interval + interval / 2)
        for _ in 0..<plan.repetitions {
            for peer in plan.peers {
                let log = FireLog(capacity: plan.precisionFires + 10)
                let outcome = run.run(on: peer, log: log)
                let lateness = Summary(log.lateness(
                    firstFire: outcome.firstFire, interval: Int64(interval * 1e9), slack: 1_000_000))
                medians[peer, default: []].append(lateness.median / 1e3)
                ChartData.shared.setSamples("lateness 10 ms timer", peer, lateness.values.map { $0 / 1e3 })
                p99s[peer, default: []].append(lateness.percentile(99) / 1e3)
            }
        }
        return [
            Row.make(name, "10 ms timer lateness median", unit: "µs", values: medians),
            Row.make(name, "10 ms timer lateness p99", unit: "µs", values: p99s),
        ]
    }
}
