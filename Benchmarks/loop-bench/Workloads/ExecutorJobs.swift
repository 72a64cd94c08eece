import CLibevBench
import CoreFoundation
import Foundation
import NIOCore
import RunLoopKit

/// Workload 9: closures, actor calls and tasks sent to a loop or executor from another thread:
/// latency one at a time, CPU per job in a burst, and allocations per job in a burst of a
/// tenth the size (CLibevBench/alloccount.c counts malloc and its kin; the CPU bursts run with
/// counting off). CF's perform does not wake the loop, hence its `CFRunLoopWakeUp`.
enum ExecutorJobs: Workload {
    static let name = "jobs"
    static let summary = "closures sent from another thread (perform, RunLoop.perform + CFRunLoopWakeUp, serial queue async, NIO execute, Task.detached): latency one at a time, CPU per job in a burst; actor calls on a loop's SerialExecutor (RunLoopKit, NIO); tasks started on RunLoopKit's loop as TaskExecutor vs Task.detached."
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

    /// Closures, actor calls, tasks: the peers that cannot run each, its latencies (ns) one at
    /// a time, and a burst of it.
    static var kinds: [(unavailable: [Peer: String], latencies: (Peer, Int) -> [Double], burst: (Peer, Int, Bool) -> Burst)] {
        [(closureUnavailable, { latencies(sender($0), samples: $1) }, closureBurst(_:jobs:countingAllocations:)),
         (actorUnavailable, actorLatencies(_:samples:), actorBurst(_:jobs:countingAllocations:)),
         (taskUnavailable, { latencies(sender($0, tasks: true), samples: $1) }, taskBurst(_:jobs:countingAllocations:))]
    }

    static func measure(_ plan: Plan) -> [Row] {
        let counted = max(plan.jobBurst / 10, 1)
        // Per kind (closure, actor, task): latency median and p99 (µs), CPU (ns) and
        // allocations per job, each per peer.
        var figures = Array(repeating: Array(repeating: [Peer: [Double]](), count: 4), count: kinds.count)
        for _ in 0..<plan.repetitions {
            for (kind, (unavailable, latencies, burst)) in kinds.enumerated() {
                for peer in plan.peers where unavailable[peer] == nil {
                    let values = Summary(latencies(peer, plan.wakeSamples)).microseconds
                        + [burst(peer, plan.jobBurst, false).cpuPerJob, burst(peer, counted, true).allocationsPerJob]
                    for (figure, value) in values.enumerated() { figures[kind][figure][peer, default: []].append(value) }
                }
            }
        }
        func row(_ kind: Int, _ figure: Int, _ metric: String) -> Row {
            Row.make(name, metric, unit: ["µs", "µs", "ns", "allocations"][figure], values: figures[kind][figure],
                     unavailable: kinds[kind].unavailable)
        }
        return pairedRows(plan) + [
            row(0, 0, "closure from another thread → runs, latency median").withGoal("< 20 µs") { $0.median < 20 },
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

    /// Issue 29's rows: RunLoopKit against the best Swift peer, in interleaved pairs of
    /// processes (``Pairs``): side by side in one process they moved by tens of percent. Each:
    /// its child's key, its kind (of ``kinds``), a latency median (µs) or the CPU per job of a
    /// burst (ns), the peer, and whether a floor allows 1.25× (a wake through eventfd and epoll
    /// where the peer's is a futex; the runtime's own task creation and run).
    static func pairedRows(burst: String) -> [(key: String, kind: Int, latency: Bool, peer: Peer, floor: Bool, metric: String)] {
        [("closure-cpu", 0, false, .nio, false, "CPU per closure job, \(burst) sent back to back"),
         ("closure-latency", 0, true, .dispatch, true, "closure from another thread → runs, latency median"),
         ("actor-cpu", 1, false, .nio, false, "CPU per actor call on the loop's SerialExecutor, \(burst) awaited in a row"),
         ("task-latency", 2, true, .taskSleep, true, "task started from another thread → first line runs, latency median"),
         ("task-cpu", 2, false, .taskSleep, true, "CPU per task started from another thread, \(burst) started back to back")]
    }

    private static func pairedRows(_ plan: Plan) -> [Row] {
        guard plan.peers.contains(.runLoopKit) else { return [] }
        return pairedRows(burst: plan.jobBurst.grouped).filter { plan.peers.contains($0.peer) }.map { row in
            let pairs = Pairs.run(name, plan: plan, arguments: [row.key, String(plan.wakeSamples), String(plan.jobBurst)],
                                  against: row.peer)
            let others = Peer.allBut(.runLoopKit, row.peer, reason: "this row pairs RunLoopKit with \(row.peer.rawValue) only")
            let goal = "≤ 1.0× \(row.peer.rawValue)" + (row.floor ? ", or ≤ 1.25× with the floor in PROFILING.md" : "")
            let metric = "issue 29: \(row.metric), \(plan.pairs) interleaved pairs of fresh processes against \(row.peer.rawValue)"
            return Row.make(name, metric, unit: row.latency ? "µs" : "ns", values: [:], unavailable: others)
                .paired(pairs, figure: 0)
                .withRatioGoal(goal, to: row.peer, bound: row.floor ? 1.25 : 1.0)
        }
    }

    /// A child of the pairs: `[peer key, row key, latency samples, burst jobs]`; measures the
    /// row's figure once and prints it.
    static func child(_ arguments: [String]) {
        guard arguments.count == 4, let peer = Peer(key: arguments[0]),
              let row = pairedRows(burst: "").first(where: { $0.key == arguments[1] }),
              let samples = Int(arguments[2]), let jobs = Int(arguments[3]) else {
            fatalError("loop-bench jobs child: expected a peer, a row key, samples and jobs, got \(arguments)")
        }
        let kind = kinds[row.kind]
        Pairs.report([row.latency ? Summary(kind.latencies(peer, samples)).median / 1e3 : kind.burst(peer, jobs, false).cpuPerJob])
    }

    /// How a peer runs a job sent from another thread (`send`), and what stops its loop after.
    typealias Sender = (send: @Sendable (@escaping @Sendable () -> Void) -> Void, finish: () -> Void)

    /// How `peer` runs a closure sent to it; with `tasks`, in a task it starts: on a running
    /// RunLoopKit loop as its task executor, on a serial queue's task executor, or detached on
    /// the global executor.
    private static func sender(_ peer: Peer, tasks: Bool = false) -> Sender {
        switch peer {
        case .runLoopKit:
            let loop = LoopThread.startRunning()
            if tasks { return ({ job in Task(executorPreference: loop) { job() } }, { loop.stop() }) }
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
        case .dispatch where tasks:
            let executor = DispatchTaskExecutor()
            return ({ job in Task(executorPreference: executor) { job() } }, {})
        case .dispatch:
            let queue = DispatchQueue(label: "loop-bench.jobs")
            return ({ job in queue.async(execute: job) }, {})
        case .nio:
            let loop = NIOLoop.loop
            return ({ job in loop.execute(job) }, {})
        case .taskSleep:
            return ({ job in Task.detached { job() } }, {})
        default:
            fatalError("loop-bench jobs: \(peer.rawValue) runs no jobs")
        }
    }

    /// Latencies (ns) of `samples` jobs sent one at a time with `sender` from another thread.
    private static func latencies(_ sender: Sender, samples: Int) -> [Double] {
        defer { sender.finish() }
        let probe = WakeProbe(samples: samples, gap: gap)
        let send = sender.send
        probe.startSender { send { _ = probe.handle() } }
        probe.joinSender()
        while probe.handled.load(ordering: .acquiring) < samples { usleep(100) }
        return probe.latencies.map(Double.init)
    }

    /// CPU ns per job for `jobs` closures sent back to back from this thread, or with
    /// `countingAllocations`, allocations per job.
    static func closureBurst(_ peer: Peer, jobs: Int, countingAllocations: Bool = false) -> Burst {
        let (send, finish) = sender(peer)
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
        let (start, finish) = sender(peer, tasks: true)
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
        return burst(jobs: jobs, counting: countingAllocations) {
            blockingAwait { for _ in 0..<jobs { _ = await actor.latency(sentAt: 0) } }
        }
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

    /// A Foundation run loop on a thread of its own until `CFRunLoopStop`; other threads call
    /// only what CF documents as thread-safe, through ``Shared``.
    typealias Foundation = (handle: Shared<(runLoop: RunLoop, cfLoop: CFRunLoop)>, done: DispatchSemaphore)

    static func startFoundation() -> Foundation {
        let ready = Handoff<Foundation>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            let keepAlive = Timer(fire: Date(timeIntervalSinceNow: 3600), interval: 0, repeats: false) { _ in }
            RunLoop.current.add(keepAlive, forMode: .default)
            ready.deliver((handle: Shared((runLoop: RunLoop.current, cfLoop: CFRunLoopGetCurrent())), done: done))
            CFRunLoopRunInMode(kCFRunLoopDefaultMode, 3600, false)
            keepAlive.invalidate()
            done.signal()
        }.start()
        return ready.wait()
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
