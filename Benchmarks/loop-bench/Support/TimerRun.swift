import CLibevBench
import CoreFoundation
import Foundation
import RunLoopKit

/// A set of repeating timers run for a while on one peer: the shared shape of the fire
/// throughput, coalescing and precision workloads.
struct TimerRun: Sendable {
    /// Seconds between fires of every timer.
    var interval: Double
    /// Timer i first fires `firstAfter[i]` seconds after the common start.
    var firstAfter: [Double]
    /// Each timer's tolerance (s); libev gets `ev_set_timeout_collect_interval` instead.
    var tolerance: Double = 0
    /// The measured window (s); setup and teardown are outside it.
    var seconds: Double

    /// The outcome: the window's counters and each timer's first fire (monotonic ns).
    struct Outcome: Sendable {
        var stats: RunStats
        var firstFire: [Int64]
    }

    func run(on peer: Peer, log: FireLog?) -> Outcome {
        onFreshThread {
            switch peer {
            case .runLoopKit: runLoopKit(log: log)
            case .libev: libev(log: log)
            case .foundation: foundation(log: log)
            }
        }
    }

    private func runLoopKit(log: FireLog?) -> Outcome {
        let loop = EVRunLoop.current
        let counter = Counter()
        let start = Clock.pairedNow()
        var timers: [EVTimer] = []
        timers.reserveCapacity(firstAfter.count)
        for (index, after) in firstAfter.enumerated() {
            let timer: EVTimer
            let date = start.date.addingTimeInterval(after)
            if let log {
                let id = Int32(index)
                timer = EVTimer(fireAt: date, interval: interval, repeats: true, tolerance: tolerance) { _ in
                    counter.value += 1
                    log.record(id)
                }
            } else {
                timer = EVTimer(fireAt: date, interval: interval, repeats: true, tolerance: tolerance) { _ in
                    counter.value += 1
                }
            }
            loop.add(timer, forMode: .default)
            timers.append(timer)
        }
        loop.resetStatistics()
        let window = ThreadWindow()
        loop.run(mode: .default, for: .seconds(seconds))
        let (cpu, wall, switches) = window.end()
        let wakes = loop.statistics.wakeups
        for timer in timers { timer.invalidate() }
        return Outcome(
            stats: RunStats(fires: counter.value, wakes: wakes, cpuNanos: cpu, wallNanos: wall,
                            voluntarySwitches: switches),
            firstFire: firstFires(from: start.monotonic))
    }

    private func libev(log: FireLog?) -> Outcome {
        var stats = lb_run_stats()
        var start: Int64 = 0
        let status: Int32 = firstAfter.withUnsafeBufferPointer { after in
            if let log {
                return log.withCLog { cLog in
                    lb_run_timers(Int32(after.count), interval, after.baseAddress, tolerance, seconds,
                                  &start, cLog, &stats)
                }
            }
            return lb_run_timers(Int32(after.count), interval, after.baseAddress, tolerance, seconds,
                                 &start, nil, &stats)
        }
        precondition(status == 0, "lb_run_timers: ev_loop_new failed")
        return Outcome(stats: RunStats(stats), firstFire: firstFires(from: start))
    }

    private func foundation(log: FireLog?) -> Outcome {
        let runLoop = RunLoop.current
        let counter = Counter()
        let wakes = Counter()
        let observer = CFRunLoopObserverCreateWithHandler(
            nil, CFOptionFlags(EVRunLoop.Activity.afterWaiting.rawValue), true, 0
        ) { _, _ in wakes.value += 1 }
        CFRunLoopAddObserver(CFRunLoopGetCurrent(), observer, kCFRunLoopDefaultMode)
        let start = Clock.pairedNow()
        var timers: [Timer] = []
        timers.reserveCapacity(firstAfter.count)
        for (index, after) in firstAfter.enumerated() {
            let timer: Timer
            let date = start.date.addingTimeInterval(after)
            if let log {
                let id = Int32(index)
                timer = Timer(fire: date, interval: interval, repeats: true) { _ in
                    counter.value += 1
                    log.record(id)
                }
            } else {
                timer = Timer(fire: date, interval: interval, repeats: true) { _ in counter.value += 1 }
            }
            timer.tolerance = tolerance
            runLoop.add(timer, forMode: .default)
            timers.append(timer)
        }
        counter.value = 0
        wakes.value = 0
        let window = ThreadWindow()
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end { _ = runLoop.run(mode: .default, before: end) }
        let (cpu, wall, switches) = window.end()
        let stats = RunStats(fires: counter.value, wakes: wakes.value, cpuNanos: cpu, wallNanos: wall,
                             voluntarySwitches: switches)
        for timer in timers { timer.invalidate() }
        CFRunLoopObserverInvalidate(observer)
        return Outcome(stats: stats, firstFire: firstFires(from: start.monotonic))
    }

    private func firstFires(from start: Int64) -> [Int64] {
        firstAfter.map { start + Int64(($0 * 1e9).rounded()) }
    }
}
