import CLibevBench
import CoreFoundation
import Foundation
import RunLoopKit

/// A set of repeating timers run for a while on one peer: the shared shape of the fire
/// throughput, coalescing and precision workloads.
///
/// Every peer keeps each timer on its own grid (first fire + k × interval), as a user who
/// wants a steady rate writes it: `EVTimer` and `Timer` repeat on their grid, libev's
/// `ev_timer` and a `DispatchSourceTimer` too; NIO reschedules `scheduleTask(deadline:)` at
/// the next grid point from each callout (`scheduleRepeatedTask` counts its delay from the
/// end of the previous run, so it drifts); a task loops on `Task.sleep(until:tolerance:)`
/// at the next grid point; an `AsyncTimerSequence` ticks on its own grid from its start.
struct TimerRun: Sendable {
    /// Seconds between fires of every timer.
    var interval: Double
    /// Timer i first fires `firstAfter[i]` seconds after the common start.
    var firstAfter: [Double]
    /// Timer i's own interval (s) instead of `interval`, where given. Only RunLoopKit and
    /// libev take it (the fire workload's spread-interval rows).
    var intervals: [Double]? = nil
    /// Each timer's tolerance (s); libev gets `ev_set_timeout_collect_interval` instead,
    /// Dispatch a leeway; Foundation on Linux and NIO have none.
    var tolerance: Double = 0
    /// The measured window (s); setup and teardown are outside it.
    var seconds: Double
    /// What RunLoopKit's loop records during the window (the observing workload's rows).
    var observing: Observing = .nothing

    /// A loop's own recording: none, its metrics, or a trace.
    enum Observing: Int, Sendable {
        /// `stallWatch`: stall reports on, with a threshold no callout reaches (1 s).
        case nothing, metrics, trace, stallWatch
    }

    /// The outcome: the window's counters and each timer's first fire (monotonic ns).
    struct Outcome: Sendable {
        var stats: RunStats
        var firstFire: [Int64]
        /// RunLoopKit only: the waits the loop itself ended in the window (its statistics'
        /// wakeups), which a thread of its own, such as the stall watchdog, does not count in.
        var loopWakes = 0
    }

    func run(on peer: Peer, log: FireLog?) -> Outcome {
        precondition(intervals == nil || peer == .runLoopKit || peer == .libev,
                     "TimerRun: per-timer intervals are for RunLoopKit and libev only")
        Quiet.wait()
        return switch peer {
        case .runLoopKit: onFreshThread { runLoopKit(log: log) }
        case .libev: onFreshThread { libev(log: log) }
        case .foundation: onFreshThread { foundation(log: log) }
        case .dispatch: dispatch(log: log)
        case .nio: nio(log: log)
        case .taskSleep: taskSleep(log: log)
        case .timerSequence: timerSequence(log: log)
        }
    }

    var intervalNanos: Int64 { Int64((interval * 1e9).rounded()) }

    func afterNanos(_ index: Int) -> Int64 { Int64((firstAfter[index] * 1e9).rounded()) }

    private func runLoopKit(log: FireLog?) -> Outcome {
        let loop = EVRunLoop.current
        let start = Clock.pairedNow()
        var timers: [EVTimer] = []
        timers.reserveCapacity(firstAfter.count)
        for (index, after) in firstAfter.enumerated() {
            let timer: EVTimer
            let date = start.date.addingTimeInterval(after)
            let interval = intervals?[index] ?? interval
            if let log {
                let id = Int32(index)
                timer = EVTimer(fireAt: date, interval: interval, repeats: true, tolerance: tolerance) { _ in
                    log.record(id)
                }
            } else {
                // The loop counts the fires (its statistics); the callout does nothing, as
                // libev's only bumps a counter: a callout through `EVRunLoop.isolated` would
                // charge its thread check to the loop (PROFILING.md, "Tricks and what they earn").
                timer = EVTimer(fireAt: date, interval: interval, repeats: true, tolerance: tolerance) { _ in }
            }
            loop.add(timer, forMode: .default)
            timers.append(timer)
        }
        loop.resetStatistics()
        switch observing {
        case .nothing: break
        case .metrics: loop.recordsMetrics = true
        case .trace: loop.trace = EVRunLoop.Trace()
        case .stallWatch: loop.reportStalls(over: .seconds(1)) { _ in }
        }
        let window = ProcessWindow()
        measuredFire(loop, seconds: seconds)
        let counters = window.end()
        loop.recordsMetrics = false
        loop.trace = nil
        loop.stopReportingStalls()
        let fires = loop.statistics.timerFires
        for timer in timers { timer.invalidate() }
        return Outcome(stats: RunStats(fires: fires, counters), firstFire: firstFires(from: start.monotonic),
                       loopWakes: loop.statistics.wakeups)
    }

    private func libev(log: FireLog?) -> Outcome {
        var stats = lb_run_stats()
        var start: Int64 = 0
        let status: Int32 = firstAfter.withUnsafeBufferPointer { after in
            (intervals ?? []).withUnsafeBufferPointer { own in
                let intervals = self.intervals == nil ? nil : own.baseAddress
                func run(_ cLog: UnsafeMutablePointer<lb_fire_log>?) -> Int32 {
                    lb_run_timers(Int32(after.count), interval, intervals, after.baseAddress, tolerance, seconds, &start, cLog, &stats)
                }
                return log.map { $0.withCLog(run) } ?? run(nil)
            }
        }
        precondition(status == 0, "lb_run_timers: ev_loop_new failed")
        return Outcome(stats: RunStats(stats), firstFire: firstFires(from: start))
    }

    private func foundation(log: FireLog?) -> Outcome {
        let runLoop = RunLoop.current
        let counter = Counter()
        // Foundation calls a timer's block on the thread that runs the loop: this one.
        let fired: @Sendable () -> Void = EVRunLoop.isolated { counter.value += 1 }
        let start = Clock.pairedNow()
        let timers = firstAfter.enumerated().map { index, after in
            let timer = Timer(fire: start.date.addingTimeInterval(after), interval: interval, repeats: true) { _ in
                fired()
                log?.record(Int32(index))
            }
            timer.tolerance = tolerance
            runLoop.add(timer, forMode: .default)
            return timer
        }
        counter.value = 0
        let window = ProcessWindow()
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end { _ = runLoop.run(mode: .default, before: end) }
        let stats = RunStats(fires: counter.value, window.end())
        for timer in timers { timer.invalidate() }
        return Outcome(stats: stats, firstFire: firstFires(from: start.monotonic))
    }

    /// Measures a peer whose timers run on threads of its own: `start` sets them up and
    /// returns the common start (monotonic ns); the window is `seconds` of this thread asleep;
    /// `stop` ends them and waits until no callout runs.
    func measureWindow(
        fires: AtomicCounter, start: () -> Int64, stop: () -> Void
    ) -> Outcome {
        let origin = start()
        let before = fires.value
        let window = ProcessWindow()
        sleepThread(seconds)
        let stats = RunStats(fires: fires.value - before, window.end())
        stop()
        return Outcome(stats: stats, firstFire: firstFires(from: origin))
    }

    func firstFires(from start: Int64) -> [Int64] {
        firstAfter.indices.map { start + afterNanos($0) }
    }
}
