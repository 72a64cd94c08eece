import AsyncAlgorithms
import Foundation

/// Workload 10: 1,000 tasks, each looping on a 0.2 s sleep with 0.1 s tolerance, started at
/// random phases: `Task.sleep(for:tolerance:)` (lateness: the wake after the instant asked,
/// each sleep measured from just before it) versus an `AsyncTimerSequence` per task
/// (lateness against its grid). Wakes/s are the voluntary context switches of the process
/// (the pool's threads and Dispatch's manager thread). `loop.clock` comes with issue 12.
enum AsyncSleeps {
    static let name = "sleeps"
    static let count = 1_000
    static let interval = 0.2
    static let tolerance = 0.1

    static let unavailable: [Peer: String] = [
        .libev: "no async sleep",
        .foundation: "no async sleep",
        .dispatch: "no async sleep (Task.sleep is built on its timers: see Task.sleep)",
        .nio: "no Clock: a sleep there is a scheduled task's future",
    ]

    // ISSUE 12: when `loop.clock` exists, measure `try await loop.clock.sleep(for:tolerance:)`
    // in `run` like Task.sleep and drop this.
    static let pending: [Peer: String] = [.runLoopKit: "issue 12 (loop.clock)"]

    static func measure(_ plan: Plan) -> [Row] {
        var random = SeededRandom(seed: 12)
        let phases = (0..<count).map { _ in Double.random(in: 0..<interval, using: &random) }
        var wakes: [Peer: [Double]] = [:]
        var cpu: [Peer: [Double]] = [:]
        var sleeps: [Peer: [Double]] = [:]
        var lateMedian: [Peer: [Double]] = [:]
        var lateMax: [Peer: [Double]] = [:]
        var beyond: [Peer: [Double]] = [:]
        for _ in 0..<plan.repetitions {
            for peer in plan.peers where [.taskSleep, .timerSequence].contains(peer) {
                let log = FireLog(capacity: Int(Double(count) / interval * (plan.coalescingSeconds + 1.5)))
                let stats = run(peer, phases: phases, seconds: plan.coalescingSeconds, log: log)
                let lateness = Summary(log.values.map(Double.init))
                wakes[peer, default: []].append(stats.switchesPerSecond)
                cpu[peer, default: []].append(stats.cpuPercent)
                sleeps[peer, default: []].append(stats.firesPerSecond)
                lateMedian[peer, default: []].append(lateness.median / 1e3)
                lateMax[peer, default: []].append(lateness.max / 1e3)
                beyond[peer, default: []].append(
                    Double(lateness.values.filter { $0 > tolerance * 1e9 }.count) / Double(Swift.max(lateness.values.count, 1)) * 100)
            }
        }
        func row(_ metric: String, _ unit: String, better: Row.Better = .lower, _ values: [Peer: [Double]]) -> Row {
            Row.make(name, metric, unit: unit, better: better, values: values, unavailable: unavailable, pending: pending)
        }
        return [
            row("wakes/s (voluntary context switches), 1,000 tasks", "wakes/s", wakes),
            row("sleeps/s ended (asked 5,000)", "sleeps/s", better: .neither, sleeps),
            row("CPU, 1,000 sleeping tasks", "%", cpu),
            row("lateness median (tolerance 0.1 s)", "µs", better: .neither, lateMedian),
            row("lateness max (tolerance 0.1 s)", "µs", better: .neither, lateMax),
            row("sleeps later than their tolerance", "%", beyond),
        ]
    }

    /// Runs the tasks for `seconds` (after one interval to settle) and returns the window's
    /// counters; `log` gets each sleep's lateness (ns).
    private static func run(_ peer: Peer, phases: [Double], seconds: Double, log: FireLog) -> RunStats {
        Quiet.wait()
        let ended = AtomicCounter()
        let tasks = phases.map { phase in
            Task.detached {
                try? await Task.sleep(for: .seconds(double: phase))
                if peer == .taskSleep {
                    while !Task.isCancelled {
                        let asked = Clock.monotonic() + Int64(interval * 1e9)
                        do {
                            try await Task.sleep(for: .seconds(double: interval), tolerance: .seconds(double: tolerance))
                        } catch {
                            return
                        }
                        ended.increment()
                        log.record(0, value: Clock.monotonic() - asked)
                    }
                } else {
                    var next = Clock.monotonic() + Int64(interval * 1e9)
                    for await _ in AsyncTimerSequence(interval: .seconds(double: interval),
                                                      tolerance: .seconds(double: tolerance), clock: SuspendingClock()) {
                        ended.increment()
                        log.record(0, value: Clock.monotonic() - next)
                        next += Int64(interval * 1e9)
                    }
                }
            }
        }
        sleepThread(interval)
        let before = ended.value
        let window = ProcessWindow()
        sleepThread(seconds)
        let (cpu, wall, switches) = window.end()
        let count = ended.value - before
        for task in tasks { task.cancel() }
        blockingAwait { for task in tasks { await task.value } }
        return RunStats(fires: count, cpuNanos: cpu, wallNanos: wall, voluntarySwitches: switches)
    }
}
