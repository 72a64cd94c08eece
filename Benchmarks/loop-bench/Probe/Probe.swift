import CLibevBench
import Foundation

/// `loop-bench --probe MODE ARGUMENTS… [--peers PEER]`: one workload once on one peer, in this
/// process, its figures printed as `name=value`. Its timed part goes through the `measured`
/// functions callgrind counts (``Callgrind``); `operations` is what that part did.
enum Probe {
    struct Mode {
        let name: String
        let usage: String
        let summary: String
        /// The peers it runs on.
        var peers: [Peer] = [.runLoopKit, .libev]
        let run: @Sendable (Peer, [Double]) -> [(String, Double)]
    }

    /// The workloads' own probes, then the gated rows' (``GateProbes``: RunLoopKit only, one
    /// thread, no wait).
    static let modes: [Mode] = [
        Mode(name: "fire-libev", usage: "N MS",
             summary: "N repeating 1 ms timers made for one date, run for MS ms (the fire workload, RunLoopKit on its libev backend); fires and CPU ns per fire") { peer, a in
            fire(peer, count: a[0], milliseconds: a[1])
        },
        Mode(name: "fire-observed", usage: "N MS K",
             summary: "the fire-libev probe with the loop recording K: 0 nothing, 1 its metrics, 2 a trace, 3 stall reports (the observing workload); fires and CPU ns per fire") { peer, a in
            fire(peer, count: a[0], milliseconds: a[1], observing: TimerRun.Observing(rawValue: Int(a[2])) ?? .nothing)
        },
        Mode(name: "schedule", usage: "N",
             summary: "create + add N one-shot timers 1-2 s away, invalidate them in random order, twice on one fresh thread (the schedule workload); ns per timer of the second round") { peer, a in
            let figures = ScheduleCost.measureOnce(ScheduleCost.Input(count: Int(a[0])), on: peer)
            return [("operations", a[0]), ("add_ns", figures[0]), ("invalidate_ns", figures[1])]
        },
        Mode(name: "pass", usage: "P",
             summary: "P zero-timeout runs with an observer per activity, on a thread of its own (the pass workload); ns per pass") { peer, a in
            [("operations", a[0]), ("ns_per_pass", PassOverhead.measureOnce(.poll, on: peer, passes: Int(a[0])))]
        },
        Mode(name: "memory", usage: "N",
             summary: "N one-shot timers an hour away (the memory workload); growth of resident bytes and of malloc bytes in use, per timer") { peer, a in
            let figures = MemoryPerTimer.measureHere(peer, count: Int(a[0]))
            return [("operations", a[0]), ("resident_bytes_per_timer", figures[0]), ("malloc_bytes_per_timer", figures[1])]
        },
        Mode(name: "idle", usage: "N W",
             summary: "one idle source counting to N callouts, then stopping the run, on a thread of its own, the loop also watching an idle pipe when W is 1 (the idle workload); CPU ns per callout") { peer, a in
            [("operations", a[0]), ("cpu_ns_per_callout", IdleCallouts.measureOnce(peer, callouts: Int(a[0]), watching: a[1] == 1))]
        },
        Mode(name: "perform", usage: "N",
             summary: "N closures sent back to back from this thread (the jobs workload's burst: RunLoopKit perform, or --peers foundation, dispatch, nio, task); CPU ns, allocations and voluntary context switches per closure, allocations counted",
             peers: [.runLoopKit, .foundation, .dispatch, .nio, .taskSleep]) { peer, a in
            [("operations", a[0])] + ExecutorJobs.closureBurst(peer, jobs: Int(a[0]), countingAllocations: true).probeFigures
        },
        Mode(name: "actor", usage: "N",
             summary: "N calls awaited in a row from a pool task on an actor pinned to a loop (the jobs workload's burst; or --peers nio); CPU ns, allocations and voluntary context switches per call, allocations counted",
             peers: [.runLoopKit, .nio]) { peer, a in
            [("operations", a[0])] + ExecutorJobs.actorBurst(peer, jobs: Int(a[0]), countingAllocations: true).probeFigures
        },
        Mode(name: "task", usage: "N",
             summary: "N tasks started back to back from this thread with the loop as their executor preference (the jobs workload's burst; or --peers task: Task.detached); CPU ns, allocations and voluntary context switches per task, allocations counted",
             peers: [.runLoopKit, .taskSleep]) { peer, a in
            [("operations", a[0])] + ExecutorJobs.taskBurst(peer, jobs: Int(a[0]), countingAllocations: true).probeFigures
        },
        Mode(name: "glib-iteration", usage: "W I V MS",
             summary: "I GLib iterations paced by a g_timeout_add(MS) beside W idle g_unix_fd_add watches, on the main thread: V 0 GLib's own g_main_loop_run, 1 hosted in EVRunLoop.main.run(), 2 RunLoopKit attached (the glibcost workload); CPU µs per iteration",
             peers: [.runLoopKit]) { _, a in
            let variant = GLibIterationCost.Variant.allCases[Int(a[2])]
            let (cpu, iterations) = GLibIterationCost.run(variant, watches: Int(a[0]), iterations: Int(a[1]), milliseconds: UInt32(a[3]))
            return [("operations", Double(iterations)), ("cpu_us_per_iteration", cpu)]
        },
        Mode(name: "gate-fire", usage: "N K",
             summary: "N repeating timers already due, fired by one polling pass, the loop recording K (0 nothing, 1 metrics, 2 a trace); fires",
             peers: [.runLoopKit]) { _, a in [("operations", GateProbes.fire(count: Int(a[0]), observing: Int(a[1])))] },
        Mode(name: "gate-schedule", usage: "N", summary: "the schedule probe after the warm-up: N timers created + added, then invalidated; timers",
             peers: [.runLoopKit]) { _, a in [("operations", GateProbes.schedule(count: Int(a[0])))] },
        Mode(name: "gate-pass", usage: "P", summary: "P polling passes with nothing due; passes",
             peers: [.runLoopKit]) { _, a in [("operations", GateProbes.pass(passes: Int(a[0])))] },
        Mode(name: "gate-descriptors", usage: "N", summary: "N pipe descriptor sources created, added and watched; sources",
             peers: [.runLoopKit]) { _, a in [("operations", GateProbes.descriptors(count: Int(a[0])))] },
        Mode(name: "gate-perform", usage: "N", summary: "N blocks performed from the loop's thread and run; blocks",
             peers: [.runLoopKit]) { _, a in [("operations", GateProbes.perform(count: Int(a[0])))] },
        Mode(name: "gate-task", usage: "N", summary: "N tasks started on the loop from its thread and run; tasks",
             peers: [.runLoopKit]) { _, a in [("operations", GateProbes.task(count: Int(a[0])))] },
        Mode(name: "gate-actor", usage: "N", summary: "N actor calls on the loop's executor from a task on the loop; calls",
             peers: [.runLoopKit]) { _, a in [("operations", GateProbes.actor(count: Int(a[0])))] },
    ]

    /// The fire workload's `count` 1 ms timers run for `milliseconds` on `peer`, the loop
    /// recording `observing`: fires, CPU ns per fire, fires/s.
    private static func fire(_ peer: Peer, count: Double, milliseconds: Double, observing: TimerRun.Observing = .nothing) -> [(String, Double)] {
        var run = TimerRun(interval: FireThroughput.interval, firstAfter: Array(repeating: FireThroughput.interval, count: Int(count)),
                           seconds: milliseconds / 1_000)
        run.observing = observing
        let stats = run.run(on: peer, log: nil).stats
        return [("operations", Double(stats.fires)), ("cpu_ns_per_fire", stats.cpuPerFire), ("fires_per_s", stats.firesPerSecond)]
    }

    /// The modes for `--help`.
    static var help: String {
        modes.map { "\($0.name) \($0.usage): \($0.summary)" }.joined(separator: "; ")
    }

    /// Why `mode` with `arguments` cannot run, or nil.
    static func problem(mode: String, arguments: [String], peers: [Peer]) -> String? {
        guard let found = modes.first(where: { $0.name == mode }) else {
            return "unknown probe mode \(mode); choose from \(modes.map(\.name).joined(separator: ", "))"
        }
        let expected = found.usage.split(separator: " ").count
        if arguments.count != expected || arguments.contains(where: { Double($0) == nil }) {
            return "probe \(mode) takes \(found.usage) (numbers), got \(arguments.joined(separator: " "))"
        }
        if peers.count != 1 || !found.peers.contains(peers[0]) {
            return "probe \(mode) runs on one peer: --peers \(found.peers.map(\.key).joined(separator: " or ")) (runloopkit is the default)"
        }
        return nil
    }

    /// Runs `mode` (checked by ``problem(mode:arguments:peers:)``) and prints its figures.
    static func run(mode: String, arguments: [String], peer: Peer) {
        let found = modes.first { $0.name == mode }!
        // As the schedule workload's children (`ScheduleCost.child`): malloc keeps what is freed.
        if mode == "schedule" { lb_keep_freed_memory() }
        let figures = found.run(peer, arguments.map { Double($0)! })
        let fields = [("mode", mode), ("peer", peer.key)] + figures.map { name, value in
            (name, value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.2f", value))
        }
        print(fields.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
    }
}
