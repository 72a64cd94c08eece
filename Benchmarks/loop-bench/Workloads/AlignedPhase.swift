import AsyncAlgorithms
import CLibevBench
import CoreFoundation
import Foundation
import NIOCore
import RunLoopKit

/// Workload 4b: a timer on the wall-clock grid, by each peer's own means or by hand as a user
/// would (``Workloads/all`` lists them); its phase after each grid point.
enum AlignedPhase: Workload {
    static let name = "aligned"
    static let summary = "timer on the wall-clock grid (EVTimer(alignedTo:), ev_periodic; by hand: Timer(fire:) at the next grid point, DispatchSourceTimer on a wallDeadline, NIO and Task.sleep re-armed from the wall clock, AsyncTimerSequence after a first sleep); phase after the grid point."

    static func measure(_ plan: Plan) -> [Row] {
        let (interval, fires) = (plan.alignedInterval, plan.alignedFires)
        let phases = plan.repeated(plan.peers, figures: 2) { peer in
            let times = [.runLoopKit, .libev, .foundation].contains(peer)
                ? onFreshThread { wallTimes(on: peer, interval: interval, fires: fires) }
                : wallTimes(on: peer, interval: interval, fires: fires)
            return figures(times, interval: interval)
        }
        let timerRows = rows(plan, "", phases)
        guard plan.peers.contains(.runLoopKit) else { return timerRows }
        // RunLoopKit's async form (issue 12): a task on the pool reading `for await` over
        // `loop.ticks(alignedTo:)` of a loop running on its own thread; the phase is when the
        // task got each element.
        let ticks = plan.repeated([.runLoopKit], figures: 2) { _ in
            let loop = LoopThread.startRunning()
            let log = FireLog(capacity: fires)
            blockingAwait {
                for await _ in loop.ticks(alignedTo: .seconds(double: interval)) {
                    if log.recordWallTime() == fires { break }
                }
            }
            loop.stop()
            return figures(log.values, interval: interval)
        }
        let others = Peer.allBut(.runLoopKit, reason: "RunLoopKit only: its async tick sequence")
        return timerRows + rows(plan, ", `for await` over loop.ticks(alignedTo:) in a pool task", ticks, unavailable: others)
    }

    /// The phase median and max (µs) of callouts at wall-clock `times`.
    private static func figures(_ times: [Int64], interval: Double) -> [Double] {
        let phases = Summary(times.map { phase(of: $0, interval: interval) })
        return [phases.median / 1e3, phases.max / 1e3]
    }

    /// The phase median row (goal < 100 µs) and max row, `suffix` after their metric.
    private static func rows(_ plan: Plan, _ suffix: String, _ phases: [[Peer: [Double]]],
                             unavailable: [Peer: String] = [:]) -> [Row] {
        let grid = plan.alignedInterval == 1 ? "whole-second" : "\(plan.alignedInterval) s"
        return [
            Row.make(name, "\(grid) aligned phase median\(suffix)", unit: "µs", values: phases[0], unavailable: unavailable)
                .withGoal("< 100 µs") { $0.median < 100 },
            Row.make(name, "\(grid) aligned phase max\(suffix)", unit: "µs", values: phases[1], unavailable: unavailable),
        ]
    }

    /// How far after its nearest point of the grid of `interval` seconds a wall-clock time
    /// (ns since 1970) lies, in ns; early shows negative.
    private static func phase(of time: Int64, interval: Double) -> Double {
        let grid = Int64((interval * 1e9).rounded())
        let phase = time % grid
        return Double(phase > grid / 2 ? phase - grid : phase)
    }

    /// The next point of the wall-clock grid of `interval` seconds (ns since 1970).
    private static func nextGridPoint(_ interval: Double) -> Int64 {
        let grid = Int64((interval * 1e9).rounded())
        return (Clock.realtime() / grid + 1) * grid
    }

    /// The wall-clock times (ns since 1970) of the first `fires` callouts.
    private static func wallTimes(on peer: Peer, interval: Double, fires: Int) -> [Int64] {
        let log = FireLog(capacity: fires)
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            let timer = EVTimer(alignedTo: interval) { _ in
                if log.recordWallTime() == fires { EVRunLoop.current.stop() }
            }
            loop.add(timer, forMode: .default)
            loop.run()
            timer.invalidate()
        case .libev:
            var times = [Int64](repeating: 0, count: fires)
            let status = lb_aligned(interval, Int32(fires), &times)
            precondition(status == 0, "lb_aligned: ev_loop_new failed")
            return times
        case .foundation:
            let now = Date().timeIntervalSince1970
            let next = Date(timeIntervalSince1970: ((now / interval).rounded(.down) + 1) * interval)
            let timer = Timer(fire: next, interval: interval, repeats: true) { _ in
                if log.recordWallTime() == fires { CFRunLoopStop(CFRunLoopGetCurrent()) }
            }
            RunLoop.current.add(timer, forMode: .default)
            while log.count < fires { _ = RunLoop.current.run(mode: .default, before: .distantFuture) }
            timer.invalidate()
        case .dispatch:
            let done = DispatchSemaphore(value: 0)
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "loop-bench.aligned"))
            let next = nextGridPoint(interval)
            timer.schedule(wallDeadline: DispatchWallTime(timespec: timespec(tv_sec: Int(next / 1_000_000_000),
                                                                              tv_nsec: Int(next % 1_000_000_000))),
                           repeating: .nanoseconds(Int(interval * 1e9)), leeway: .nanoseconds(0))
            timer.setEventHandler { if log.recordWallTime() == fires { done.signal() } }
            timer.activate()
            done.wait()
            timer.cancel()
        case .nio:
            let done = DispatchSemaphore(value: 0)
            let loop = NIOLoop.loop
            @Sendable func arm() {
                let delay = nextGridPoint(interval) - Clock.realtime()
                loop.scheduleTask(in: .nanoseconds(delay)) {
                    if log.recordWallTime() == fires { done.signal() } else { arm() }
                }
            }
            loop.execute { arm() }
            done.wait()
        case .taskSleep:
            blockingAwait {
                while log.count < fires {
                    let delay = nextGridPoint(interval) - Clock.realtime()
                    try? await Task.sleep(for: .nanoseconds(delay), tolerance: .zero)
                    log.recordWallTime()
                }
            }
        case .timerSequence:
            blockingAwait {
                try? await Task.sleep(for: .nanoseconds(nextGridPoint(interval) - Clock.realtime()), tolerance: .zero)
                log.recordWallTime()
                for await _ in AsyncTimerSequence(interval: .seconds(double: interval), tolerance: .zero,
                                                   clock: SuspendingClock()) {
                    if log.recordWallTime() == fires { break }
                }
            }
        }
        return log.values
    }
}
