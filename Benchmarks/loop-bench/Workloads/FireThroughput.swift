import Foundation

/// Workload 1: N repeating 1 ms timers: process CPU per fire, fires/s against asked. Then 10,000
/// timers spread over 1–2 ms (RunLoopKit and libev): a rescheduled timer then sifts through
/// RunLoopKit's heap instead of joining its sorted run.
enum FireThroughput: Workload {
    static let name = "fire"
    static let summary = "N repeating timers (above 100k: RunLoopKit and libev only), 1 ms interval, started together; CPU time of the process per fire, fires/s achieved vs asked."
    static let interval = 0.001

    static func measure(_ plan: Plan) -> [Row] {
        var rows: [Row] = []
        var medianCPU: [Int: [Peer: Double]] = [:]
        for count in plan.throughputCounts {
            let run = TimerRun(interval: interval, firstAfter: Array(repeating: interval, count: count),
                               seconds: plan.throughputSeconds)
            // Above 100k the pairs' window is ten times longer: RunLoopKit's first sweep over
            // new timers costs more than later ones, and at 1M one sweep filled a short window.
            let large = count > Pairs.largestForAllPeers
            let pairs = Pairs.run(name, plan: plan, arguments: [String(count), String(plan.throughputSeconds * (large ? 10 : 1))])
            let figures = plan.repeated(Pairs.others(plan.peers, count: count), figures: 2) { peer in
                let stats = run.run(on: peer, log: nil).stats
                return [stats.cpuPerFire, stats.firesPerSecond]
            }
            // No goal at N = 10, where the figure is mostly the cost of a wake; above 100k the
            // goal is the ratio to libev alone.
            let unavailable = Pairs.unavailable(count: count)
            var cpuRow = Row.make(name, "CPU per fire, N = \(count.grouped)", unit: "ns",
                                  values: figures[0], unavailable: unavailable).paired(pairs, figure: 0)
            if large {
                cpuRow = cpuRow.withRatioGoal("≤ 1.5× libev", to: .libev, bound: 1.5)
            } else if count >= 1_000 {
                let met = cpuRow.ratio(to: .libev).flatMap { libev in cpuRow.ratio(to: .foundation).map { libev <= 1.5 && $0 <= 0.01 } }
                cpuRow = cpuRow.withGoal("≤ 1.5× libev, ≤ 0.01× Foundation", met: met)
            }
            rows.append(cpuRow)
            let achievedRow = Row.make(name, "fires/s achieved (asked \((count * 1000).grouped)), N = \(count.grouped)",
                                       unit: "fires/s", better: .higher, values: figures[1],
                                       unavailable: unavailable).paired(pairs, figure: 1)
            // Only at 100k is every peer saturated (asked far more than any can fire).
            rows.append(count == 100_000 ? achievedRow.withRatioGoal("≥ 2/3 libev", to: .libev, bound: 2.0 / 3) : achievedRow)
            medianCPU[count] = cpuRow.cells.compactMapValues { $0.summary?.median }
            for (peer, median) in medianCPU[count]! { ChartData.shared.add("cpu-per-fire", peer, x: Double(count), y: median) }
        }
        for (count, label) in [(100_000, "100k"), (1_000_000, "1M")] {
            if let small = medianCPU[1_000], let large = medianCPU[count] { rows.append(growthRow(small: small, large: large, to: count, label: label)) }
        }
        if let spread = spreadIntervals(plan) { rows.append(spread) }
        return rows
    }

    /// CPU per fire at N = `count` over N = 1,000, each peer's medians; the goal is
    /// O(log n): log(`count`) / log(1,000).
    static func growthRow(small: [Peer: Double], large: [Peer: Double], to count: Int, label: String) -> Row {
        let bound = log(Double(count)) / log(1_000.0)
        let allows = String(format: "%.3g", bound)
        var values: [Peer: [Double]] = [:]
        for (peer, s) in small { if let l = large[peer] { values[peer] = [l / s] } }
        return Row.make(name, "CPU per fire growth, N = 1k → \(label) (O(log n) allows \(allows)×)", unit: "×",
                        better: .neither, values: values)
            .withGoal("≤ \(allows)× (O(log n))") { $0.median <= bound }
    }

    /// A child of the pairs: `[peer key, timer count, seconds]`; after an untimed run, the
    /// figures of the lowest-CPU of three runs of a third of `seconds` (a burst only ever adds).
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 2)
        let seconds = a[1]
        var run = TimerRun(interval: interval, firstAfter: Array(repeating: interval, count: Int(a[0])),
                           seconds: Swift.min(seconds, 0.2))
        _ = run.run(on: peer, log: nil)
        run.seconds = seconds / 3
        let best = (0..<3).map { _ in run.run(on: peer, log: nil).stats }.min { $0.cpuPerFire < $1.cpuPerFire }!
        Pairs.report([best.cpuPerFire, best.firesPerSecond])
    }

    /// CPU per fire of 10,000 timers whose intervals spread over 1–2 ms (the same seeded
    /// intervals for both peers), each first firing one interval after the start.
    static func spreadIntervals(_ plan: Plan) -> Row? {
        let peers = plan.peers.filter { $0 == .runLoopKit || $0 == .libev }
        guard !peers.isEmpty, let count = plan.throughputCounts.last(where: { $0 <= 10_000 }) else { return nil }
        var random = SeededRandom(seed: 7)
        let intervals = (0..<count).map { _ in Double.random(in: 0.001..<0.002, using: &random) }
        let run = TimerRun(interval: interval, firstAfter: intervals, intervals: intervals, seconds: plan.throughputSeconds)
        let cpuPerFire = plan.repeated(peers, figures: 1) { [run.run(on: $0, log: nil).stats.cpuPerFire] }
        return Row.make(name, "CPU per fire, N = \(count.grouped), intervals spread over 1–2 ms", unit: "ns",
                        values: cpuPerFire[0])
    }
}
