import AsyncAlgorithms
import CLibevBench
import Foundation
import NIOCore
import RunLoopKit

/// Workload 7: resident and malloc growth per timer when 100k (and, RunLoopKit and libev only,
/// 1M) timers an hour away are added, each in a child process so that memory freed by earlier
/// workloads cannot hide the growth. Task.sleep and AsyncTimerSequence: a sleeping task each.
enum MemoryPerTimer: Workload {
    static let name = "memory"
    static let summary = "100k timers (and 1M: RunLoopKit and libev only) added in a child process (Dispatch timer sources, NIO scheduled tasks, a sleeping task each for Task.sleep and AsyncTimerSequence); resident and malloc growth per timer."

    static func measure(_ plan: Plan) -> [Row] {
        plan.memoryCounts.flatMap { count in
            // Every measurement is a child process (`--child memory <peer> <count>`).
            let pairs = Pairs.run(name, plan: plan, arguments: [String(count)])
            let figures = plan.repeated(Pairs.others(plan.peers, count: count), figures: 2) { peer in
                Children.figures(name, [peer.key, String(count)])
            }
            let unavailable = Pairs.unavailable(count: count)
            return ["resident growth per timer", "malloc bytes in use per timer"].enumerated().map { index, metric in
                Row.make(name, "\(metric), N = \(count.grouped)", unit: "bytes", values: figures[index], unavailable: unavailable)
                    .paired(pairs, figure: index)
                    .withRatioGoal("≤ 2× libev", to: .libev, bound: 2)
            }
        }
    }

    /// The child's entry point: `[peer key, timer count]`.
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 1)
        Pairs.report(measureHere(peer, count: Int(a[0])))
    }

    /// In this process (a child), on its main thread: adds `count` timers to `peer`'s loop
    /// and returns the growth of resident bytes and of malloc bytes in use, per timer.
    static func measureHere(_ peer: Peer, count: Int) -> [Double] {
        // Warm up: create the loop and its default mode before the baseline.
        switch peer {
        case .runLoopKit:
            EVRunLoop.current.add(EVTimer(interval: 7200, repeats: false) { _ in }, forMode: .default)
        case .foundation:
            RunLoop.current.add(Timer(fire: Date(timeIntervalSinceNow: 7200), interval: 0, repeats: false) { _ in }, forMode: .default)
        case .libev:
            break
        case .dispatch:
            DispatchSource.makeTimerSource(queue: memoryQueue).activate()
        case .nio:
            NIOLoop.onLoop { _ = NIOLoop.loop.scheduleTask(in: .hours(2)) {} }
        case .taskSleep, .timerSequence:
            startSleepers(peer, count: 1)
        }
        let rss0 = lb_resident_bytes()
        let heap0 = lb_heap_in_use_bytes()
        var libevSet: UnsafeMutableRawPointer?
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            for index in 0..<count {
                loop.add(EVTimer(interval: 3600 + Double(index) * 1e-6, repeats: false) { _ in },
                         forMode: .default)
            }
        case .foundation:
            let runLoop = RunLoop.current
            for index in 0..<count {
                runLoop.add(Timer(fire: Date(timeIntervalSinceNow: 3600 + Double(index) * 1e-6), interval: 0, repeats: false) { _ in },
                            forMode: .default)
            }
        case .libev:
            libevSet = lb_timer_set_create(Int32(count))
            precondition(libevSet != nil, "lb_timer_set_create failed")
        case .dispatch:
            var timers: [any DispatchSourceTimer] = []
            timers.reserveCapacity(count)
            for index in 0..<count {
                let timer = DispatchSource.makeTimerSource(queue: memoryQueue)
                timer.schedule(deadline: .now() + 3600 + Double(index) * 1e-6)
                timer.setEventHandler {}
                timer.activate()
                timers.append(timer)
            }
            dispatchTimers = timers
        case .nio:
            NIOLoop.onLoop {
                for index in 0..<count {
                    _ = NIOLoop.loop.scheduleTask(in: .seconds(3600) + .microseconds(Int64(index))) {}
                }
            }
        case .taskSleep, .timerSequence:
            startSleepers(peer, count: count)
        }
        let rss1 = lb_resident_bytes()
        let heap1 = lb_heap_in_use_bytes()
        if let libevSet { lb_timer_set_destroy(libevSet) }
        return [Double(rss1 - rss0) / Double(count), Double(heap1 - heap0) / Double(count)]
    }

    private static let memoryQueue = DispatchQueue(label: "loop-bench.memory")
    // Written once, by the child's main thread, only to keep the timers alive until it exits.
    nonisolated(unsafe) private static var dispatchTimers: [any DispatchSourceTimer] = []

    /// Starts `count` tasks asleep for an hour (`Task.sleep` or an `AsyncTimerSequence`);
    /// returns 0.3 s after every one of them is about to sleep.
    private static func startSleepers(_ peer: Peer, count: Int) {
        let started = AtomicCounter()
        for _ in 0..<count {
            if peer == .taskSleep {
                Task.detached {
                    started.increment()
                    try? await Task.sleep(for: .seconds(3600))
                }
            } else {
                Task.detached {
                    started.increment()
                    for await _ in AsyncTimerSequence(interval: .seconds(3600), clock: SuspendingClock()) {}
                }
            }
        }
        while started.value < count { usleep(10_000) }
        usleep(300_000)
    }
}
