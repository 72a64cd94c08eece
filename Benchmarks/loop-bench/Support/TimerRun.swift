import CLibevBench
import Foundation
import RunLoopKit

/// Repeating timers run for a while on one peer (the fire, coalescing and precision
/// workloads), each on its own grid (first fire + k × interval) as a user who wants a steady
/// rate writes it: NIO reschedules at the next grid point from each callout, since
/// `scheduleRepeatedTask` drifts; a task sleeps until the next grid point.
struct TimerRun: Sendable {
    /// Seconds between fires of every timer.
    var interval: Double
    /// Timer i first fires `firstAfter[i]` seconds after the common start.
    var firstAfter: [Double]
    /// Timer i's own interval (s), for RunLoopKit and libev only (spread-interval rows).
    var intervals: [Double]? = nil
    /// Each timer's tolerance (s): libev's collect interval, Dispatch's leeway.
    var tolerance: Double = 0
    /// The measured window (s); setup and teardown are outside it.
    var seconds: Double
    /// What RunLoopKit's loop records during the window (the observing workload's rows).
    var observing: Observing = .nothing

    /// A loop's own recording; `stallWatch`: stall reports with a threshold no callout reaches.
    enum Observing: Int, Sendable {
        case nothing, metrics, trace, stallWatch
    }

    /// The outcome: the window's counters and each timer's first fire (monotonic ns).
    struct Outcome: Sendable {
        var stats: RunStats
        var firstFire: [Int64]
        /// RunLoopKit only: the loop's own wakeups in the window (not the stall watchdog's).
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
            let id = Int32(index)
            // The loop's statistics count the fires: a counting callout would charge its
            // thread check to the loop.
            let fired: @Sendable (EVTimer) -> Void = if let log { { _ in log.record(id) } } else { { _ in } }
            let timer = EVTimer(fireAt: start.date.addingTimeInterval(after), interval: intervals?[index] ?? interval,
                                repeats: true, tolerance: tolerance, block: fired)
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

    /// Also the machine workload's libev: with `wakes`, each wake's time.
    func libev(log: FireLog?, wakes: FireLog? = nil) -> Outcome {
        var stats = lb_run_stats()
        var start: Int64 = 0
        let status: Int32 = firstAfter.withUnsafeBufferPointer { after in
            (intervals ?? []).withUnsafeBufferPointer { own in
                log.withCLog { cLog in
                    wakes.withCLog { cWakes in
                        lb_run_timers(Int32(after.count), interval, intervals == nil ? nil : own.baseAddress, after.baseAddress,
                                      tolerance, seconds, &start, cLog, cWakes, &stats)
                    }
                }
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

    /// Measures a peer whose timers run on threads of its own over `seconds` of this thread
    /// asleep: `start` returns the common start (monotonic ns), `stop` waits for the last callout.
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
