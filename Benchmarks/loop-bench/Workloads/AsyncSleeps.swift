import AsyncAlgorithms
import RunLoopKit

/// Workload 10: 1,000 tasks looping on a 0.2 s sleep with 0.1 s tolerance: wakes/s, CPU,
/// lateness. The goal (issue 12) is on the loop's own wakeups (`statistics.wakeups`): each loop
/// wake that resumes tasks on the pool also wakes the pool's threads.
enum AsyncSleeps: Workload {
    static let name = "sleeps"
    static let summary = "1,000 tasks looping on a 0.2 s sleep with 0.1 s tolerance (loop.clock, Task.sleep(for:tolerance:), AsyncTimerSequence); wakes/s, CPU, lateness."
    static let count = 1_000
    static let interval = 0.2
    static let tolerance = 0.1

    static let unavailable: [Peer: String] = [
        .libev: "no async sleep",
        .foundation: "no async sleep",
        .dispatch: "no async sleep (Task.sleep is built on its timers: see Task.sleep)",
        .nio: "no Clock: a sleep there is a scheduled task's future",
    ]

    /// The figures of one run, in this order.
    private enum Figure: Int {
        case wakes, cpu, sleeps, lateMedian, lateMax, beyond, early, loopWakeups
    }

    static func measure(_ plan: Plan) -> [Row] {
        var random = SeededRandom(seed: 12)
        let phases = (0..<count).map { _ in Double.random(in: 0..<interval, using: &random) }
        // Each run's figures: every peer's (RunLoopKit: tasks on the pool), and RunLoopKit's
        // with the tasks preferring its loop.
        var figures: [Peer: [[Double]]] = [:]
        var onLoop: [[Double]] = []
        for _ in 0..<plan.repetitions {
            for peer in plan.peers where [.runLoopKit, .taskSleep, .timerSequence].contains(peer) {
                figures[peer, default: []].append(run(peer, phases: phases, seconds: plan.coalescingSeconds))
            }
            if plan.peers.contains(.runLoopKit) {
                onLoop.append(run(.runLoopKit, preferringLoop: true, phases: phases, seconds: plan.coalescingSeconds))
            }
        }
        func row(_ metric: String, _ unit: String, better: Row.Better = .lower, _ figure: Figure) -> Row {
            Row.make(name, metric, unit: unit, better: better, values: figures.mapValues { $0.map { $0[figure.rawValue] } },
                     unavailable: unavailable)
        }
        func loopRow(_ metric: String, _ unit: String, better: Row.Better = .lower, _ runs: [[Double]],
                     _ figure: Figure, _ reason: String) -> Row {
            Row.make(name, metric, unit: unit, better: better,
                     values: runs.isEmpty ? [:] : [.runLoopKit: runs.map { $0[figure.rawValue] }],
                     unavailable: Peer.allBut(.runLoopKit, reason: reason))
        }
        let onPool = figures[.runLoopKit] ?? []
        let preferring = "RunLoopKit only: the tasks prefer its loop"
        return [
            row("wakes/s (voluntary context switches), 1,000 tasks (RunLoopKit: loop.clock, tasks on the pool)", "wakes/s", .wakes),
            row("sleeps/s ended (asked 5,000)", "sleeps/s", better: .neither, .sleeps),
            row("CPU, 1,000 sleeping tasks", "%", .cpu),
            row("lateness median (tolerance 0.1 s)", "µs", better: .neither, .lateMedian),
            row("lateness max (tolerance 0.1 s)", "µs", better: .neither, .lateMax),
            row("sleeps later than their tolerance", "%", .beyond).withGoal("none in any repetition") { $0.max == 0 },
            row("sleeps ended before their deadline", "sleeps", .early).withGoal("none in any repetition") { $0.max == 0 },
            // The goal is the loop's: the pool's two threads add their own wakes to the process's
            // count (at least one each per loop wake that resumes tasks on them).
            loopRow("loop.clock, tasks on the pool: the loop thread's own wakeups/s (statistics.wakeups)",
                    "wakes/s", onPool, .loopWakeups, "RunLoopKit only: its loop's counter")
                .withGoal("≤ 11 wakes/s") { $0.max <= 11 },
            loopRow("loop.clock, tasks preferring the loop (Task(executorPreference: loop)): wakes/s", "wakes/s", onLoop, .wakes, preferring),
            loopRow("loop.clock, tasks preferring the loop: the loop thread's own wakeups/s", "wakes/s", onLoop, .loopWakeups,
                    "RunLoopKit only: its loop's counter"),
            loopRow("loop.clock, tasks preferring the loop: CPU", "%", onLoop, .cpu, preferring),
            loopRow("loop.clock, tasks preferring the loop: lateness max", "µs", better: .neither, onLoop, .lateMax, preferring),
        ]
    }

    /// Runs `peer`'s tasks for `seconds` (after one interval to settle): the window's
    /// ``Figure``s, from each sleep's lateness (ns) and the process's and the loop's counters.
    /// RunLoopKit's tasks sleep on `loop.clock`, on the pool or `preferringLoop`.
    private static func run(_ peer: Peer, preferringLoop: Bool = false, phases: [Double], seconds: Double) -> [Double] {
        let log = FireLog(capacity: Int(Double(count) / interval * (seconds + 1.5)))
        Quiet.wait()
        let ended = AtomicCounter()
        let loop: EVRunLoop? = peer == .runLoopKit ? LoopThread.startRunning() : nil
        let tasks = phases.map { phase in
            let body: @Sendable () async -> Void = {
                try? await Task.sleep(for: .seconds(double: phase))
                if peer == .timerSequence {
                    var next = Clock.monotonic() + Int64(interval * 1e9)
                    for await _ in AsyncTimerSequence(interval: .seconds(double: interval),
                                                      tolerance: .seconds(double: tolerance), clock: SuspendingClock()) {
                        ended.increment()
                        log.record(0, value: Clock.monotonic() - next)
                        next += Int64(interval * 1e9)
                    }
                    return
                }
                let clock = loop?.clock
                while !Task.isCancelled {
                    let asked = Clock.monotonic() + Int64(interval * 1e9)
                    do {
                        if let clock {
                            try await clock.sleep(for: .seconds(double: interval), tolerance: .seconds(double: tolerance))
                        } else {
                            try await Task.sleep(for: .seconds(double: interval), tolerance: .seconds(double: tolerance))
                        }
                    } catch {
                        return
                    }
                    ended.increment()
                    log.record(0, value: Clock.monotonic() - asked)
                }
            }
            if preferringLoop, let loop {
                return Task(executorPreference: loop, operation: body)
            }
            return Task.detached(operation: body)
        }
        sleepThread(interval)
        let before = ended.value
        let wakeupsBefore = loop.map { $0.statisticsFromAnyThread().wakeups } ?? 0
        let window = ProcessWindow()
        sleepThread(seconds)
        let stats = RunStats(fires: ended.value - before, window.end())
        let loopWakeups = Double((loop.map { $0.statisticsFromAnyThread().wakeups } ?? 0) - wakeupsBefore) / stats.seconds
        for task in tasks { task.cancel() }
        blockingAwait { for task in tasks { await task.value } }
        loop?.stop()
        let lateness = Summary(log.values.map(Double.init))
        let beyond = Double(lateness.values.filter { $0 > tolerance * 1e9 }.count) / Double(Swift.max(lateness.values.count, 1)) * 100
        return [stats.switchesPerSecond, stats.cpuPercent, stats.firesPerSecond, lateness.median / 1e3, lateness.max / 1e3,
                beyond, Double(lateness.values.filter { $0 < 0 }.count), loopWakeups]
    }
}
