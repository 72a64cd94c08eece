import AsyncAlgorithms
import Foundation
import RunLoopKit

/// Workload 10: 1,000 tasks, each looping on a 0.2 s sleep with 0.1 s tolerance, started at
/// random phases: `Task.sleep(for:tolerance:)` (lateness: the wake after the instant asked,
/// each sleep measured from just before it) versus an `AsyncTimerSequence` per task
/// (lateness against its grid) versus RunLoopKit's `loop.clock.sleep(for:tolerance:)` (the
/// loop running on a thread of its own; lateness measured as for Task.sleep). The tasks run
/// on the cooperative pool; one more RunLoopKit row has them prefer the loop
/// (`Task(executorPreference: loop)`), so that a sleep resumes on the loop's thread. Wakes/s
/// are the voluntary context switches of the process (the pool's threads, Dispatch's
/// manager thread, the loop's thread); the goal (issue 12) is on the loop's own wakeups
/// (`statistics.wakeups`), since each loop wake that resumes tasks on the pool also wakes
/// the pool's threads, and on sleeps ending neither early nor past their tolerance.
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

    /// How the tasks sleep.
    private enum Sleeper {
        case taskSleep, timerSequence
        /// `loop.clock.sleep`, from tasks on the pool or preferring the loop.
        case loopClock(onLoop: Bool)
    }

    static func measure(_ plan: Plan) -> [Row] {
        var random = SeededRandom(seed: 12)
        let phases = (0..<count).map { _ in Double.random(in: 0..<interval, using: &random) }
        var wakes: [Peer: [Double]] = [:]
        var cpu: [Peer: [Double]] = [:]
        var sleeps: [Peer: [Double]] = [:]
        var lateMedian: [Peer: [Double]] = [:]
        var lateMax: [Peer: [Double]] = [:]
        var beyond: [Peer: [Double]] = [:]
        var early: [Peer: [Double]] = [:]
        var onLoop: [Peer: [[Double]]] = [:]
        // RunLoopKit's loop's own wakeups/s (`statistics.wakeups`): tasks on the pool, on the loop.
        var ownWakeups: [[Double]] = [[], []]
        let capacity = Int(Double(count) / interval * (plan.coalescingSeconds + 1.5))
        for _ in 0..<plan.repetitions {
            for peer in plan.peers where [.runLoopKit, .taskSleep, .timerSequence].contains(peer) {
                let sleeper: Sleeper = switch peer {
                case .taskSleep: .taskSleep
                case .timerSequence: .timerSequence
                default: .loopClock(onLoop: false)
                }
                let log = FireLog(capacity: capacity)
                let (stats, loopWakeups) = run(sleeper, phases: phases, seconds: plan.coalescingSeconds, log: log)
                if peer == .runLoopKit { ownWakeups[0].append(loopWakeups) }
                let lateness = Summary(log.values.map(Double.init))
                wakes[peer, default: []].append(stats.switchesPerSecond)
                cpu[peer, default: []].append(stats.cpuPercent)
                sleeps[peer, default: []].append(stats.firesPerSecond)
                lateMedian[peer, default: []].append(lateness.median / 1e3)
                lateMax[peer, default: []].append(lateness.max / 1e3)
                beyond[peer, default: []].append(
                    Double(lateness.values.filter { $0 > tolerance * 1e9 }.count) / Double(Swift.max(lateness.values.count, 1)) * 100)
                early[peer, default: []].append(Double(lateness.values.filter { $0 < 0 }.count))
            }
            if plan.peers.contains(.runLoopKit) {
                let log = FireLog(capacity: capacity)
                let (stats, loopWakeups) = run(.loopClock(onLoop: true), phases: phases, seconds: plan.coalescingSeconds, log: log)
                ownWakeups[1].append(loopWakeups)
                let lateness = Summary(log.values.map(Double.init))
                let figures = [stats.switchesPerSecond, stats.cpuPercent, lateness.max / 1e3]
                for (index, value) in figures.enumerated() {
                    onLoop[.runLoopKit, default: Array(repeating: [], count: figures.count)][index].append(value)
                }
            }
        }
        func row(_ metric: String, _ unit: String, better: Row.Better = .lower, goal: String? = nil, _ values: [Peer: [Double]]) -> Row {
            Row.make(name, metric, unit: unit, better: better, goal: goal, values: values, unavailable: unavailable)
        }
        func loopRow(_ metric: String, _ unit: String, better: Row.Better = .lower, _ index: Int) -> Row {
            let values = onLoop.mapValues { $0[index] }
            let others = Dictionary(uniqueKeysWithValues: Peer.others.map { ($0, "RunLoopKit only: the tasks prefer its loop") })
            return Row.make(name, metric, unit: unit, better: better, values: values, unavailable: others)
        }
        func ownRow(_ metric: String, goal: String? = nil, _ values: [Double]) -> Row {
            let others = Dictionary(uniqueKeysWithValues: Peer.others.map { ($0, "RunLoopKit only: its loop's counter") })
            return Row.make(name, metric, unit: "wakes/s", goal: goal, values: values.isEmpty ? [:] : [.runLoopKit: values],
                            unavailable: others)
        }
        // The goal is the loop's: the pool's two threads add their own wakes to the process's
        // count (at least one each per loop wake that resumes tasks on them).
        var loopWakes = ownRow("loop.clock, tasks on the pool: the loop thread's own wakeups/s (statistics.wakeups)",
                               goal: "≤ 11 wakes/s", ownWakeups[0])
        loopWakes.goalMet = loopWakes.cells[.runLoopKit]?.summary.map { $0.max <= 11 }
        var lateRow = row("sleeps later than their tolerance", "%", goal: "none in any repetition", beyond)
        lateRow.goalMet = lateRow.cells[.runLoopKit]?.summary.map { $0.max == 0 }
        var earlyRow = row("sleeps ended before their deadline", "sleeps", goal: "none in any repetition", early)
        earlyRow.goalMet = earlyRow.cells[.runLoopKit]?.summary.map { $0.max == 0 }
        return [
            row("wakes/s (voluntary context switches), 1,000 tasks (RunLoopKit: loop.clock, tasks on the pool)",
                "wakes/s", wakes),
            row("sleeps/s ended (asked 5,000)", "sleeps/s", better: .neither, sleeps),
            row("CPU, 1,000 sleeping tasks", "%", cpu),
            row("lateness median (tolerance 0.1 s)", "µs", better: .neither, lateMedian),
            row("lateness max (tolerance 0.1 s)", "µs", better: .neither, lateMax),
            lateRow,
            earlyRow,
            loopWakes,
            loopRow("loop.clock, tasks preferring the loop (Task(executorPreference: loop)): wakes/s", "wakes/s", 0),
            ownRow("loop.clock, tasks preferring the loop: the loop thread's own wakeups/s", ownWakeups[1]),
            loopRow("loop.clock, tasks preferring the loop: CPU", "%", 1),
            loopRow("loop.clock, tasks preferring the loop: lateness max", "µs", better: .neither, 2),
        ]
    }

    /// Runs the tasks for `seconds` (after one interval to settle) and returns the window's
    /// counters; `log` gets each sleep's lateness (ns).
    private static func run(_ sleeper: Sleeper, phases: [Double], seconds: Double, log: FireLog) -> (RunStats, loopWakeups: Double) {
        Quiet.wait()
        let ended = AtomicCounter()
        let loop: EVRunLoop? = if case .loopClock = sleeper { LoopThread.startRunning() } else { nil }
        let tasks = phases.map { phase in
            let body: @Sendable () async -> Void = {
                try? await Task.sleep(for: .seconds(double: phase))
                if let loop {
                    let clock = loop.clock
                    while !Task.isCancelled {
                        let asked = Clock.monotonic() + Int64(interval * 1e9)
                        do {
                            try await clock.sleep(for: .seconds(double: interval), tolerance: .seconds(double: tolerance))
                        } catch {
                            return
                        }
                        ended.increment()
                        log.record(0, value: Clock.monotonic() - asked)
                    }
                } else if case .taskSleep = sleeper {
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
            if case .loopClock(onLoop: true) = sleeper, let loop {
                return Task(executorPreference: loop, operation: body)
            }
            return Task.detached(operation: body)
        }
        sleepThread(interval)
        let before = ended.value
        let wakeupsBefore = loop.map { $0.statisticsFromAnyThread().wakeups } ?? 0
        let window = ProcessWindow()
        sleepThread(seconds)
        let (cpu, wall, switches) = window.end()
        let loopWakeups = Double((loop.map { $0.statisticsFromAnyThread().wakeups } ?? 0) - wakeupsBefore) / (Double(wall) / 1e9)
        let count = ended.value - before
        for task in tasks { task.cancel() }
        blockingAwait { for task in tasks { await task.value } }
        loop?.stop()
        return (RunStats(fires: count, cpuNanos: cpu, wallNanos: wall, voluntarySwitches: switches), loopWakeups)
    }
}
