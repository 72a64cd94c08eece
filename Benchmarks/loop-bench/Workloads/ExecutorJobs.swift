import CLibevBench
import CoreFoundation
import Dispatch
import Foundation
import NIOCore
import RunLoopKit
import Synchronization

/// Workload 9: jobs sent to a loop or executor from another thread.
///
/// - Closures: RunLoopKit `perform`; Foundation `RunLoop.perform` + `CFRunLoopWakeUp` (CF's
///   perform does not wake the loop); a serial `DispatchQueue`'s `async`; NIO's
///   `EventLoop.execute`; a `Task.detached` on Swift's global executor (Task.sleep column).
///   Latency: one job at a time, `gap` after the previous one ran (the target asleep).
///   CPU per job: `burst` jobs sent back to back, process CPU from the first send to the
///   last job run (sender and runner both), divided by the jobs.
/// - Swift jobs on a serial executor: an actor pinned to the executor (RunLoopKit:
///   `loop.asUnownedSerialExecutor()`; NIO: `loop.executor`), its method awaited from a task
///   on the global executor (each call hops there and back).
/// - Tasks started from another thread: RunLoopKit `Task(executorPreference: loop)` (the
///   loop as a `TaskExecutor`) against `Task(executorPreference:)` on a serial Dispatch
///   queue's `TaskExecutor` (``DispatchTaskExecutor``) and `Task.detached` on the global
///   executor; latency from the sender's call to the task's first line, and CPU per task
///   in a burst.
/// - Allocations per job, block, actor call or task: every thread's calls into malloc (and
///   its kin) during a burst of its own (a tenth of the CPU burst's jobs), divided by the
///   jobs, as SwiftNIO's CI counts allocations per operation (CLibevBench/alloccount.c
///   interposes malloc; the CPU bursts run with counting off).
enum ExecutorJobs {
    static let name = "jobs"
    static let gap = 0.0005

    static let closureUnavailable: [Peer: String] = [
        .libev: "no job queue: its cross-thread call is ev_async_send (see wake)",
        .timerSequence: "a timer sequence runs no jobs",
    ]

    static let actorUnavailable: [Peer: String] = [
        .libev: "no executor",
        .foundation: "RunLoop is no executor",
        .dispatch: "Linux's Dispatch has no DispatchSerialQueue executor",
        .taskSleep: "the global executor is not serial (its jobs: see the closure rows)",
        .timerSequence: "a timer sequence runs no jobs",
    ]

    static let taskUnavailable: [Peer: String] = [
        .libev: "no executor",
        .foundation: "RunLoop is no executor",
        .nio: "measured as an actor's SerialExecutor (rows above)",
        .timerSequence: "a timer sequence runs no jobs",
    ]

    static func measure(_ plan: Plan) -> [Row] {
        let counted = max(plan.jobBurst / 10, 1)
        let kinds = [
            (closureUnavailable, closureLatencies(_:samples:), closureBurst(_:jobs:countingAllocations:)),
            (actorUnavailable, actorLatencies(_:samples:), actorBurst(_:jobs:countingAllocations:)),
            (taskUnavailable, taskLatencies(_:samples:), taskBurst(_:jobs:countingAllocations:)),
        ]
        // Per kind (closure, actor, task): latency median and p99 (µs), CPU (ns) and
        // allocations per job, each per peer.
        var figures = Array(repeating: Array(repeating: [Peer: [Double]](), count: 4), count: kinds.count)
        for _ in 0..<plan.repetitions {
            for (kind, (unavailable, latencies, burst)) in kinds.enumerated() {
                for peer in plan.peers where unavailable[peer] == nil {
                    let latency = Summary(latencies(peer, plan.wakeSamples))
                    let values = [latency.median / 1e3, latency.percentile(99) / 1e3,
                                  burst(peer, plan.jobBurst, false).cpuPerJob, burst(peer, counted, true).allocationsPerJob]
                    for (figure, value) in values.enumerated() { figures[kind][figure][peer, default: []].append(value) }
                }
            }
        }
        func row(_ kind: Int, _ figure: Int, _ metric: String) -> Row {
            Row.make(name, metric, unit: ["µs", "µs", "ns", "allocations"][figure], values: figures[kind][figure],
                     unavailable: kinds[kind].0)
        }
        var medianRow = row(0, 0, "closure from another thread → runs, latency median")
        medianRow.goal = "< 20 µs"
        medianRow.goalMet = medianRow.cells[.runLoopKit]?.summary.map { $0.median < 20 }
        return pairedRows(plan) + [
            medianRow,
            row(0, 1, "closure from another thread → runs, latency p99"),
            row(0, 2, "CPU per closure job, \(plan.jobBurst.grouped) sent back to back"),
            row(0, 3, "allocations per closure job (RunLoopKit: performed block), \(counted.grouped) sent back to back, the closure made once"),
            row(1, 0, "actor call on the loop's SerialExecutor from a pool task, latency median"),
            row(1, 2, "CPU per actor call on the loop's SerialExecutor, \(plan.jobBurst.grouped) awaited in a row (a hop there and back each)"),
            row(1, 3, "allocations per actor call on the loop's SerialExecutor, \(counted.grouped) awaited in a row"),
            row(2, 0, "task started from another thread → first line runs, latency median (RunLoopKit: Task(executorPreference: loop); Dispatch: Task(executorPreference:) on a serial queue's TaskExecutor; Task.sleep column: Task.detached)"),
            row(2, 2, "CPU per task started from another thread, \(plan.jobBurst.grouped) started back to back"),
            row(2, 3, "allocations per task started from another thread, \(counted.grouped) started back to back (the runtime's task included)"),
        ]
    }

    // MARK: Issue 29's rows, in interleaved pairs

    /// Issue 29's rows: each RunLoopKit against the best Swift peer of the table,
    /// measured in interleaved pairs of fresh processes (``Pairs``) rather than side by side
    /// in this process, where they move by tens of percent between runs.
    enum PairedRow: String, CaseIterable {
        case closureCPU = "closure-cpu", closureLatency = "closure-latency"
        case actorCPU = "actor-cpu"
        case taskLatency = "task-latency", taskCPU = "task-cpu"

        /// The best Swift peer of issue 29's table for this row.
        var peer: Peer {
            switch self {
            case .closureCPU, .actorCPU: .nio
            case .closureLatency: .dispatch
            case .taskLatency, .taskCPU: .taskSleep
            }
        }

        var isLatency: Bool { self == .closureLatency || self == .taskLatency }

        /// Whether PROFILING.md ("Cross-thread work") shows the floor that allows 1.25×: a
        /// wake through libev's eventfd and epoll where the peer's is a futex (the latency
        /// rows); the runtime's task creation and job run, equal in instructions to
        /// `Task.detached`'s (CPU per task).
        var hasFloor: Bool { isLatency || self == .taskCPU }

        func metric(_ plan: Plan) -> String {
            let n = "\(plan.pairs) interleaved pairs of fresh processes against \(peer.rawValue)"
            return switch self {
            case .closureCPU: "issue 29: CPU per closure job, \(plan.jobBurst.grouped) sent back to back, \(n)"
            case .closureLatency: "issue 29: closure from another thread → runs, latency median, \(n)"
            case .actorCPU: "issue 29: CPU per actor call on the loop's SerialExecutor, \(plan.jobBurst.grouped) awaited in a row, \(n)"
            case .taskLatency: "issue 29: task started from another thread → first line runs, latency median, \(n)"
            case .taskCPU: "issue 29: CPU per task started from another thread, \(plan.jobBurst.grouped) started back to back, \(n)"
            }
        }

        /// The row's figure, measured once in this process on `peer`: the median of
        /// `samples` latencies (µs), or the CPU per job of a burst of `jobs` (ns).
        func measure(_ peer: Peer, samples: Int, jobs: Int) -> Double {
            switch self {
            case .closureCPU: closureBurst(peer, jobs: jobs).cpuPerJob
            case .closureLatency: Summary(closureLatencies(peer, samples: samples)).median / 1e3
            case .actorCPU: actorBurst(peer, jobs: jobs).cpuPerJob
            case .taskLatency: Summary(taskLatencies(peer, samples: samples)).median / 1e3
            case .taskCPU: taskBurst(peer, jobs: jobs).cpuPerJob
            }
        }
    }

    private static func pairedRows(_ plan: Plan) -> [Row] {
        guard plan.peers.contains(.runLoopKit) else { return [] }
        return PairedRow.allCases.filter { plan.peers.contains($0.peer) }.map { kind in
            let pairs = Pairs.run(name, plan: plan, arguments: [kind.rawValue, String(plan.wakeSamples), String(plan.jobBurst)],
                                  against: kind.peer)
            let others = Dictionary(uniqueKeysWithValues: Peer.others.filter { $0 != kind.peer }.map {
                ($0, "this row pairs RunLoopKit with \(kind.peer.rawValue) only")
            })
            let limit = kind.hasFloor ? 1.25 : 1.0
            let goal = kind.hasFloor
                ? "≤ 1.0× \(kind.peer.rawValue), or ≤ 1.25× with the floor in PROFILING.md"
                : "≤ 1.0× \(kind.peer.rawValue)"
            return Row.make(name, kind.metric(plan), unit: kind.isLatency ? "µs" : "ns", values: [:], unavailable: others)
                .paired(pairs, figure: 0)
                .withRatioGoal(goal, to: kind.peer, bound: limit)
        }
    }

    /// A child of the pairs: `[peer key, row, latency samples, burst jobs]`; measures the
    /// row's figure once and prints it.
    static func child(_ arguments: [String]) {
        guard arguments.count == 4, let peer = Peer(key: arguments[0]), let kind = PairedRow(rawValue: arguments[1]),
              let samples = Int(arguments[2]), let jobs = Int(arguments[3]) else {
            fatalError("loop-bench jobs child: expected a peer, a row (\(PairedRow.allCases.map(\.rawValue))), samples and jobs, got \(arguments)")
        }
        Pairs.report([kind.measure(peer, samples: samples, jobs: jobs)])
    }

    // MARK: Measurements

    /// How a peer runs a job sent from another thread (`send`), and what stops its loop after.
    typealias Sender = (send: @Sendable (@escaping @Sendable () -> Void) -> Void, finish: () -> Void)

    /// How `peer` runs a closure sent to it.
    private static func closureSender(_ peer: Peer) -> Sender {
        switch peer {
        case .runLoopKit:
            let loop = LoopThread.startRunning()
            return ({ job in loop.perform(job) }, { loop.stop() })
        case .foundation:
            let loop = LoopThread.startFoundation()
            let send: @Sendable (@escaping @Sendable () -> Void) -> Void = { job in
                loop.handle.with { foundation in
                    foundation.runLoop.perform(inModes: [.default], block: job)
                    CFRunLoopWakeUp(foundation.cfLoop)
                }
            }
            return (send, { loop.handle.with { CFRunLoopStop($0.cfLoop) }; loop.done.wait() })
        case .dispatch:
            let queue = DispatchQueue(label: "loop-bench.jobs")
            return ({ job in queue.async(execute: job) }, {})
        case .nio:
            let loop = NIOLoop.loop
            return ({ job in loop.execute(job) }, {})
        case .taskSleep:
            return ({ job in Task.detached { job() } }, {})
        default:
            fatalError("loop-bench jobs: \(peer.rawValue) runs no closures")
        }
    }

    /// How `peer` starts a task that runs a job: on a running RunLoopKit loop as its task
    /// executor, on a serial queue's task executor, or detached on the global executor.
    private static func taskStarter(_ peer: Peer) -> Sender {
        switch peer {
        case .runLoopKit:
            let loop = LoopThread.startRunning()
            return ({ job in Task(executorPreference: loop) { job() } }, { loop.stop() })
        case .taskSleep:
            return ({ job in Task.detached { job() } }, {})
        case .dispatch:
            let executor = DispatchTaskExecutor()
            return ({ job in Task(executorPreference: executor) { job() } }, {})
        default:
            fatalError("loop-bench jobs: \(peer.rawValue) starts no tasks")
        }
    }

    /// Latencies (ns) of `samples` jobs sent one at a time with `sender` from a sender thread.
    private static func latencies(_ sender: Sender, samples: Int) -> [Double] {
        defer { sender.finish() }
        let probe = WakeProbe(samples: samples, gap: gap)
        let send = sender.send
        probe.startSender { send { _ = probe.handle() } }
        probe.joinSender()
        while probe.handled.load(ordering: .acquiring) < samples { usleep(100) }
        return probe.latencies.map(Double.init)
    }

    /// Latencies (ns) of closures sent one at a time from another thread.
    static func closureLatencies(_ peer: Peer, samples: Int) -> [Double] {
        latencies(closureSender(peer), samples: samples)
    }

    /// Latencies (ns) of tasks started one at a time from a sender thread.
    static func taskLatencies(_ peer: Peer, samples: Int) -> [Double] {
        latencies(taskStarter(peer), samples: samples)
    }

    /// CPU ns per job for `jobs` closures sent back to back from this thread, or with
    /// `countingAllocations`, allocations per job.
    static func closureBurst(_ peer: Peer, jobs: Int, countingAllocations: Bool = false) -> Burst {
        let (send, finish) = closureSender(peer)
        defer { finish() }
        Quiet.wait()
        let done = DispatchSemaphore(value: 0)
        let ran = AtomicCounter()
        let job: @Sendable () -> Void = {
            ran.increment()
            if ran.value == jobs { done.signal() }
        }
        return burst(jobs: jobs, counting: countingAllocations) {
            measuredJobsSend(jobs, job, send)
            done.wait()
        }
    }

    /// CPU ns per task for `jobs` tasks started back to back from this thread (or with
    /// `countingAllocations`, allocations per task).
    static func taskBurst(_ peer: Peer, jobs: Int, countingAllocations: Bool = false) -> Burst {
        let (start, finish) = taskStarter(peer)
        defer { finish() }
        Quiet.wait()
        let done = DispatchSemaphore(value: 0)
        let ran = AtomicCounter()
        return burst(jobs: jobs, counting: countingAllocations) {
            for _ in 0..<jobs {
                start {
                    if ran.incremented() == jobs { done.signal() }
                }
            }
            done.wait()
        }
    }

    /// An actor pinned to `peer`'s serial executor, and what stops that executor afterwards.
    private static func pinnedActor(_ peer: Peer) -> (LoopActor, finish: () -> Void) {
        switch peer {
        case .runLoopKit:
            let loop = LoopThread.startRunning()
            return (LoopActor(loop: loop), { loop.stop() })
        case .nio:
            return (LoopActor(nio: NIOLoop.loop), {})
        default:
            fatalError("loop-bench jobs: \(peer.rawValue) has no serial executor")
        }
    }

    /// Latencies (ns) of actor calls on `peer`'s executor, one at a time, from a pool task.
    static func actorLatencies(_ peer: Peer, samples: Int) -> [Double] {
        let (actor, finish) = pinnedActor(peer)
        defer { finish() }
        return blockingAwait {
            var latencies: [Double] = []
            for _ in 0..<samples {
                try? await Task.sleep(for: .seconds(double: gap))
                latencies.append(Double(await actor.latency(sentAt: Clock.monotonic())))
            }
            return latencies
        }
    }

    /// CPU ns per actor call on `peer`'s executor, `jobs` calls awaited in a row (or with
    /// `countingAllocations`, allocations per call).
    static func actorBurst(_ peer: Peer, jobs: Int, countingAllocations: Bool = false) -> Burst {
        let (actor, finish) = pinnedActor(peer)
        defer { finish() }
        Quiet.wait()
        // The results are summed and kept, so that the calls cannot be optimised away.
        var total: Int64 = 0
        let burst = burst(jobs: jobs, counting: countingAllocations) {
            total = blockingAwait {
                var total: Int64 = 0
                for _ in 0..<jobs { total &+= await actor.latency(sentAt: 0) }
                return total
            }
        }
        withExtendedLifetime(total) {}
        return burst
    }

    /// What a burst of jobs cost, per job.
    struct Burst {
        var cpuPerJob: Double
        /// NaN unless the burst counted allocations.
        var allocationsPerJob: Double
        /// Times a thread of the process blocked (futex waits, sleeps in epoll_wait).
        var switchesPerJob: Double

        /// The figures of a probe (``Probe``).
        var probeFigures: [(String, Double)] {
            [("cpu_ns_per_job", cpuPerJob), ("allocations_per_job", allocationsPerJob),
             ("voluntary_switches_per_job", switchesPerJob)]
        }
    }

    /// Runs `body`, a burst of `jobs`, in a window of process CPU, and of every thread's
    /// allocations when `counting`.
    private static func burst(jobs: Int, counting: Bool, _ body: () -> Void) -> Burst {
        if counting { lb_alloc_counting_start() }
        let window = ProcessWindow()
        body()
        let (cpu, _, switches) = window.end()
        let allocations = counting ? Double(lb_alloc_counting_stop()) / Double(jobs) : .nan
        return Burst(cpuPerJob: Double(cpu) / Double(jobs), allocationsPerJob: allocations,
                     switchesPerJob: Double(switches) / Double(jobs))
    }
}

/// An actor pinned to an event loop's serial executor: a RunLoopKit loop's or NIO's.
actor LoopActor {
    private let executor: UnownedSerialExecutor
    /// The executor's owner, kept alive as long as the actor.
    private let owner: any Sendable

    init(loop: EVRunLoop) {
        executor = loop.asUnownedSerialExecutor()
        owner = loop
    }

    init(nio loop: any EventLoop) {
        executor = loop.executor.asUnownedSerialExecutor()
        owner = loop
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor }

    /// The time from `sentAt` (monotonic ns) to now, on the executor.
    func latency(sentAt: Int64) -> Int64 { Clock.monotonic() - sentAt }

    /// `value`, on the executor (the gated actor call row: ``GateProbes/actor(count:)``).
    func echo(_ value: Int) -> Int { value }
}

/// A run loop on a thread of its own, for jobs sent to it from the measuring thread.
enum LoopThread {
    /// A loop running its default mode (kept alive by a far timer) on a thread of its own,
    /// until `stop()`.
    static func startRunning() -> EVRunLoop {
        let ready = Handoff<EVRunLoop>()
        Thread {
            let loop = EVRunLoop.current
            let keepAlive = EVTimer(interval: 3600, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            ready.deliver(loop)
            measuredJobsLoop(loop)
            keepAlive.invalidate()
        }.start()
        return ready.wait()
    }

    /// A Foundation run loop running on a thread of its own until `CFRunLoopStop`.
    /// Only `perform`, `CFRunLoopWakeUp` and `CFRunLoopStop` are called from other threads
    /// (CF documents them as thread-safe), through ``Shared``.
    struct Foundation: Sendable {
        let handle: Shared<(runLoop: RunLoop, cfLoop: CFRunLoop)>
        let done: DispatchSemaphore
    }

    static func startFoundation() -> Foundation {
        let ready = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let loop = Mutex<Foundation?>(nil)
        Thread {
            let keepAlive = Timer(fire: Date(timeIntervalSinceNow: 3600), interval: 0, repeats: false) { _ in }
            RunLoop.current.add(keepAlive, forMode: .default)
            loop.withLock { $0 = Foundation(handle: Shared((runLoop: RunLoop.current, cfLoop: CFRunLoopGetCurrent())), done: done) }
            ready.signal()
            CFRunLoopRunInMode(kCFRunLoopDefaultMode, 3600, false)
            keepAlive.invalidate()
            done.signal()
        }.start()
        ready.wait()
        return loop.withLock { $0! }
    }
}

extension EVRunLoop {
    /// The loop's ``statistics``, read on its thread by a queued block (the loop must be
    /// running a common mode); the caller waits for it.
    func statisticsFromAnyThread() -> Statistics {
        let handoff = Handoff<Statistics>()
        perform { handoff.deliver(self.statistics) }
        return handoff.wait()
    }
}
