import CRunLoopKitGLib
import CLibevBench
import Foundation
import RunLoopKit
import RunLoopKitGLib
import Synchronization

/// Workload 15 (issue 26): GLib both ways, each figure from a child process whose main thread
/// runs `g_main_loop_run` or `EVRunLoop.main.run` hosting GLib; the variants interleaved, one
/// child each. Each variant's figure sits in the RunLoopKit column (the variant is in the
/// metric); GLib's own figures, the goals' references, are rows of their own.
enum GLibBothWays: Workload {
    static let name = "glib"
    static let summary = "GLib both ways, on the main thread of a child process: DispatchQueue.main / @MainActor latency from another thread under g_main_loop_run (RunLoopKit attached, a 10 ms polling tickler, an idle re-armed by hand; GLib's own g_idle_add as reference); idle wakes/s and CPU; a g_timeout_add(10)'s lateness hosted in EVRunLoop.main.run() vs g_main_loop_run; wakes/s of 1,000 timers (0.2 s, tolerance 0.1 s) attached."

    /// How the main thread's loop is set up (here and in ``GLibIterationCost``).
    enum Variant: String, CaseIterable {
        /// GLib alone: `g_main_loop_run` with no RunLoopKit (the other thread posts with
        /// `g_idle_add`).
        case glib
        /// `EVRunLoop.main.host(nil, in: [.default])`, then `EVRunLoop.main.run`.
        case hosted
        /// `EVRunLoop.main.attach(to: nil)`, then `g_main_loop_run`.
        case attached
        /// A `g_timeout_add(10)` that runs `EVRunLoop.main` for a zero timeout, then `g_main_loop_run`.
        case tickler
        /// A `g_idle_add` that runs `EVRunLoop.main` for a zero timeout and stays armed.
        case idle

        var label: String {
            switch self {
            case .glib: "GLib alone (reference)"
            case .hosted: "GLib hosted in EVRunLoop.main.run()"
            case .attached: "RunLoopKit attached to GLib"
            case .tickler: "10 ms polling tickler"
            case .idle: "g_idle_add re-armed by hand"
            }
        }

        /// The label naming the loop that runs.
        var runLabel: String {
            switch self {
            case .glib: "\(label): g_main_loop_run"
            case .attached: "\(label)'s g_main_loop_run"
            default: label
            }
        }
    }

    static let unavailable = Peer.allBut(.runLoopKit, reason:
        "GLib's loop with RunLoopKit in it, or in RunLoopKit's: each variant's figure is in the RunLoopKit column, GLib's own in a row of its own")

    static func measure(_ plan: Plan) -> [Row] {
        guard plan.peers.contains(.runLoopKit) else { return [] }
        return latencyRows(plan) + idleRows(plan) + timeoutRows(plan) + timerRows(plan)
    }

    /// A latency measurement: under which variant, and what the other thread posts.
    private struct Post: Hashable {
        var variant: Variant
        /// `true`: a `@MainActor` task; `false`: a `DispatchQueue.main.async` block (or
        /// `g_idle_add`, for GLib alone).
        var actor = false
    }

    private static func row(_ metric: String, unit: String, _ values: [Double], better: Row.Better = .lower) -> Row {
        Row.make(name, metric, unit: unit, better: better, values: [.runLoopKit: values], unavailable: unavailable)
    }

    private static func latencyRows(_ plan: Plan) -> [Row] {
        let samples = plan.glibSamples
        // The goals compare to GLib alone, so every post kind is interleaved with it: the
        // figures of one repetition see the same machine.
        let posts = [Post(variant: .glib), Post(variant: .attached), Post(variant: .attached, actor: true),
                     Post(variant: .tickler), Post(variant: .idle)]
        let figures = Children.interleaved(name, repetitions: plan.repetitions, posts) {
            ["latency", $0.variant.rawValue, $0.actor ? "actor" : "queue", String(samples)]
        }
        let n = "\(samples.grouped) posts from another thread, 1–2 ms apart, under g_main_loop_run"
        let reference = figures[posts[0]]!.map { $0[0] }
        var rows = [row("GLib alone (reference): g_idle_add → callback latency median, \(n)", unit: "µs", reference),
                    row("GLib alone (reference): g_idle_add → callback latency p99, \(n)", unit: "µs", figures[posts[0]]!.map { $0[1] })]
        for post in posts.dropFirst() {
            let what = post.actor ? "@MainActor task → body" : "DispatchQueue.main.async → block"
            let values = figures[post]!
            var medianRow = row("\(what) latency median, \(post.variant.label), \(n)", unit: "µs", values.map { $0[0] })
            if post.variant == .attached {
                // Judged on the median of the repetitions' ratios, each to GLib's figure of
                // the same repetition.
                let ratio = Summary(zip(values, reference).map { $0[0] / $1 }).median
                medianRow = medianRow.withGoal("≤ 1.5× GLib's own g_idle_add (\(NumberFormat.value(Summary(reference).median)) µs); "
                    + "median ratio per repetition \(NumberFormat.value(ratio))×", met: ratio <= 1.5)
            }
            rows += [medianRow, row("\(what) latency p99, \(post.variant.label), \(n)", unit: "µs", values.map { $0[1] })]
        }
        return rows
    }

    private static func idleRows(_ plan: Plan) -> [Row] {
        let seconds = plan.glibSeconds
        let variants = [Variant.glib, .attached, .hosted, .tickler, .idle]
        let figures = Children.interleaved(name, repetitions: plan.repetitions, variants) { ["idle", $0.rawValue, String(seconds)] }
        let window = "nothing due, \(NumberFormat.value(seconds)) s window"
        return variants.flatMap { variant in
            let wakes = row("idle wakes/s (voluntary switches beyond the window's one wait), \(variant.label), \(window)",
                            unit: "wakes/s", figures[variant]!.map { $0[0] })
            let cpu = row("idle CPU, \(variant.label), \(window)", unit: "%", figures[variant]!.map { $0[1] })
            guard variant == .attached || variant == .hosted else { return [wakes, cpu] }
            return [wakes.withGoal("0") { $0.max == 0 }, cpu.withGoal("~0 % (< 0.1 %)") { $0.median < 0.1 }]
        }
    }

    private static func timeoutRows(_ plan: Plan) -> [Row] {
        let fires = plan.glibTimeoutFires
        let figures = Children.interleaved(name, repetitions: plan.repetitions, [Variant.glib, .hosted]) {
            ["timeout", $0.rawValue, String(fires)]
        }
        let n = "g_timeout_add(10) callback lateness past its ready time, \(fires.grouped) fires"
        let referenceMedian = Summary(figures[.glib]!.map { $0[0] }).median
        return [Variant.glib, .hosted].flatMap { variant in
            var medianRow = row("\(n) median, \(variant.runLabel)", unit: "µs", figures[variant]!.map { $0[0] })
            if variant == .hosted {
                medianRow = medianRow.withGoal("≤ 1.2× GLib's own (\(NumberFormat.value(referenceMedian)) µs)") {
                    $0.median <= 1.2 * referenceMedian
                }
            }
            return [medianRow, row("\(n) p99, \(variant.runLabel)", unit: "µs", figures[variant]!.map { $0[1] })]
        }
    }

    private static func timerRows(_ plan: Plan) -> [Row] {
        let seconds = plan.glibSeconds
        let figures = Children.interleaved(name, repetitions: plan.repetitions, [Variant.attached]) {
            ["timers", $0.rawValue, String(seconds)]
        }[.attached]!
        let n = "1,000 RunLoopKit timers (0.2 s, tolerance 0.1 s, random phases), \(Variant.attached.label), g_main_loop_run"
        let wakes = row("wakes/s, \(n)", unit: "wakes/s", figures.map { $0[0] }).withGoal("≤ 11 wakes/s") { $0.max <= 11 }
        let cpu = row("CPU, \(n)", unit: "%", figures.map { $0[1] })
        let fires = row("fires/s (5,000 asked), \(n)", unit: "fires/s", figures.map { $0[2] }, better: .higher)
        return [wakes, cpu, fires]
    }

    /// A child, on the process's main thread: `[scenario, variant, …]` as `child`'s cases
    /// read them; prints its figures on one line.
    static func child(_ arguments: [String]) {
        guard arguments.count >= 3, let variant = Variant(rawValue: arguments[1]) else {
            fatalError("loop-bench glib child: expected a scenario, a variant and its parameters, got \(arguments)")
        }
        let number = Double(arguments[arguments.count - 1])
        switch (arguments[0], arguments.count, number) {
        case ("latency", 4, let samples?) where ["queue", "actor"].contains(arguments[2]):
            Pairs.report(Summary(latency(variant, actor: arguments[2] == "actor", samples: Int(samples)).map(Double.init)).microseconds)
        case ("idle", 3, let seconds?):
            Pairs.report(idle(variant, seconds: seconds))
        case ("timeout", 3, let fires?):
            let summary = Summary(timeoutLateness(variant, fires: Int(fires)))
            Pairs.report([summary.median, summary.percentile(99)])
        case ("timers", 3, let seconds?):
            Pairs.report(timers(seconds: seconds))
        default:
            fatalError("loop-bench glib child: cannot run \(arguments)")
        }
    }

    /// What the posted blocks recorded: the latency of each (ns), and a semaphore the
    /// sender waits on until its block ran.
    private final class Sink: Sendable {
        let latencies = Mutex<[Int64]>([])
        let ran = DispatchSemaphore(value: 0)

        func record(since start: Int64) {
            let latency = lb_monotonic_ns() - start
            latencies.withLock { $0.append(latency) }
            ran.signal()
        }
    }

    /// The main thread's GLib loop, for callbacks to quit it (its address).
    private final class MainLoop: Sendable {
        let address: Int
        init() { address = Int(bitPattern: g_main_loop_new(nil, 0)) }
        var pointer: OpaquePointer { OpaquePointer(bitPattern: address)! }
        func quit() { g_main_loop_quit(pointer) }
    }

    /// A GLib callback as a Swift closure, passed as the callback's user data (retained by
    /// the caller while GLib may call it).
    final class Callback {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
        var userData: gpointer { Unmanaged.passUnretained(self).toOpaque() }
        /// User data that keeps the callback alive for good (a one-shot source's, in a child
        /// process that ends soon after), or until ``onceFunc`` runs it.
        var retainedUserData: gpointer { Unmanaged.passRetained(self).toOpaque() }
        static let sourceFunc: GSourceFunc = { data in
            Unmanaged<Callback>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
        }
        /// Runs the callback once and releases it (its user data: ``retainedUserData``).
        static let onceFunc: GSourceFunc = { data in
            _ = Unmanaged<Callback>.fromOpaque(data!).takeRetainedValue().body()
            return 0
        }
    }

    /// Sets up `variant` on the main thread (GLib's default context), runs `body` there
    /// (it starts what the run needs), runs the loop until `quit` is called, and tears down.
    static func withMainLoop(_ variant: Variant, _ body: (_ quit: @escaping @Sendable () -> Void) -> Void) {
        let mainLoop = MainLoop()
        // What the tickler and the re-armed idle run: `EVRunLoop.main` for a zero timeout.
        let tick = Callback {
            _ = EVRunLoop.main.run(mode: .default, for: .zero)
            return true
        }
        var attachment: EVGLibAttachment?
        var host: EVGLibHost?
        var sourceID: guint = 0
        switch variant {
        case .attached: attachment = EVRunLoop.main.attach(to: nil)
        case .tickler: sourceID = g_timeout_add(10, Callback.sourceFunc, tick.userData)
        case .idle: sourceID = g_idle_add(Callback.sourceFunc, tick.userData)
        case .glib: break
        case .hosted: host = EVRunLoop.main.host(nil, in: [.default])
        }
        body { if variant == .hosted { EVRunLoop.main.stop() } else { mainLoop.quit() } }
        measuredGLibRun(variant == .hosted ? nil : mainLoop.pointer)
        if sourceID != 0 { g_source_remove(sourceID) }
        attachment?.detach()
        host?.unhost()
        withExtendedLifetime(tick) {}
    }

    /// `samples` posts from another thread, 1–2 ms apart, each waited for: the latency of each (ns).
    private static func latency(_ variant: Variant, actor: Bool, samples: Int) -> [Int64] {
        precondition(variant != .hosted, "loop-bench glib: latency is measured under g_main_loop_run")
        let sink = Sink()
        withMainLoop(variant) { quit in
            Thread {
                var random = SeededRandom(seed: 26)
                for index in 0..<(samples + 20) {
                    usleep(UInt32.random(in: 1_000...2_000, using: &random))
                    let start = lb_monotonic_ns()
                    if variant == .glib {
                        let post = Callback {
                            sink.record(since: start)
                            return false
                        }
                        g_idle_add(Callback.onceFunc, post.retainedUserData)
                    } else if actor {
                        Task { @MainActor in sink.record(since: start) }
                    } else {
                        DispatchQueue.main.async { sink.record(since: start) }
                    }
                    sink.ran.wait()
                    // The first 20 warm the process up.
                    if index == 19 { sink.latencies.withLock { $0.removeAll() } }
                }
                quit()  // g_main_loop_quit: any thread
            }.start()
        }
        return sink.latencies.withLock { $0 }
    }

    /// Runs the main loop of `variant`; after `settle` ms, `start` and a window of `seconds` (a
    /// `ProcessWindow`): the figures `end` makes of the window's counters.
    private static func window(_ variant: Variant, settle: UInt32, seconds: Double, start: @escaping () -> Void = {},
                               end: @escaping (RunStats) -> [Double]) -> [Double] {
        var window: ProcessWindow?
        var figures: [Double]?
        withMainLoop(variant) { quit in
            let stop = Callback {
                figures = end(RunStats(fires: 0, window!.end()))
                quit()
                return false
            }
            let begin = Callback {
                start()
                window = ProcessWindow()
                g_timeout_add(UInt32(seconds * 1_000), Callback.sourceFunc, stop.retainedUserData)
                return false
            }
            g_timeout_add(settle, Callback.sourceFunc, begin.retainedUserData)
        }
        guard let figures else { fatalError("loop-bench glib: the \(variant) window did not end") }
        return figures
    }

    /// Runs `variant` with nothing due for `seconds` after a 0.2 s settling run: wakes/s beyond
    /// the window's one wait, CPU %.
    private static func idle(_ variant: Variant, seconds: Double) -> [Double] {
        window(variant, settle: 200, seconds: seconds) { stats in
            // A loop that never waits (the re-armed idle) has no wait to take away: 0, and its
            // CPU row says why.
            [Double(max(stats.voluntarySwitches - 1, 0)) / stats.seconds, stats.cpuPercent]
        }
    }

    /// A `g_timeout_add(10)` callback's lateness past its ready time (µs), `fires` times
    /// after 10 untimed fires.
    private static func timeoutLateness(_ variant: Variant, fires: Int) -> [Double] {
        var lateness: [Double] = []
        lateness.reserveCapacity(fires + 10)
        withMainLoop(variant) { quit in
            let tick = Callback {
                let now = g_get_monotonic_time()
                let ready = g_source_get_ready_time(g_main_current_source())
                lateness.append(Double(now - ready))
                if lateness.count == fires + 10 {
                    quit()
                    return false
                }
                return true
            }
            g_timeout_add(10, Callback.sourceFunc, tick.retainedUserData)
        }
        return Array(lateness.dropFirst(10))
    }

    /// 1,000 timers (0.2 s, tolerance 0.1 s, random phases) on `EVRunLoop.main` attached to
    /// GLib: wakes/s beyond the window's one end, CPU %, fires/s, after 1 s settling.
    private static func timers(seconds: Double) -> [Double] {
        var random = SeededRandom(seed: 1_000)
        let first = Date()
        let timers = (0..<1_000).map { _ in
            EVTimer(fireAt: first.addingTimeInterval(Double.random(in: 0..<0.2, using: &random)),
                    interval: 0.2, repeats: true, tolerance: 0.1) { _ in }
        }
        for timer in timers { EVRunLoop.main.add(timer, forMode: .default) }
        var fires0 = 0
        let figures = window(.attached, settle: 1_000, seconds: seconds, start: { fires0 = EVRunLoop.main.statistics.timerFires }) {
            [Double($0.voluntarySwitches - 1) / $0.seconds, $0.cpuPercent,
             Double(EVRunLoop.main.statistics.timerFires - fires0) / $0.seconds]
        }
        for timer in timers { timer.invalidate() }
        return figures
    }
}
