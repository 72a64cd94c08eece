import AsyncAlgorithms
import Foundation
import NIOCore
import Synchronization

/// The timers of the peers that run on threads of their own: Dispatch, NIO, tasks.
extension TimerRun {
    /// `DispatchSourceTimer`s on one serial queue, each repeating on its grid, the tolerance
    /// as leeway.
    func dispatch(log: FireLog?) -> Outcome {
        let queue = DispatchQueue(label: "loop-bench.timers")
        let fires = AtomicCounter()
        var timers: [any DispatchSourceTimer] = []
        let repeating = DispatchTimeInterval.nanoseconds(Int(intervalNanos))
        let leeway = DispatchTimeInterval.nanoseconds(Int((tolerance * 1e9).rounded()))
        return measureWindow(fires: fires) {
            let base = DispatchTime.now()
            for index in firstAfter.indices {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: base + .nanoseconds(Int(afterNanos(index))), repeating: repeating, leeway: leeway)
                timer.setEventHandler {
                    fires.increment()
                    log?.record(Int32(index))
                }
                timer.activate()
                timers.append(timer)
            }
            return Int64(base.uptimeNanoseconds)
        } stop: {
            for timer in timers { timer.cancel() }
            queue.sync {}
        }
    }

    /// Timers on NIO's event loop, each a `scheduleTask(deadline:)` rescheduled at its next
    /// grid point from its callout. NIO has no tolerance. Thread at work: the event loop's.
    func nio(log: FireLog?) -> Outcome {
        let loop = NIOLoop.loop
        let fires = AtomicCounter()
        let timers = firstAfter.indices.map {
            NIOTimer(id: Int32($0), interval: intervalNanos, fires: fires, log: log, loop: loop)
        }
        return measureWindow(fires: fires) {
            NIOLoop.onLoop { [self] in
                let base = NIODeadline.now()
                for timer in timers {
                    timer.arm(at: base + .nanoseconds(afterNanos(Int(timer.id))), on: loop)
                }
                return Int64(base.uptimeNanoseconds)
            }
        } stop: {
            NIOLoop.onLoop { for timer in timers { timer.cancel() } }
        }
    }

    /// One task per timer, looping on `Task.sleep(until:tolerance:clock: .continuous)` at its
    /// next grid point.
    func taskSleep(log: FireLog?) -> Outcome {
        let fires = AtomicCounter()
        var tasks: [Task<Void, Never>] = []
        let tolerance: Duration = .seconds(double: self.tolerance)
        let interval = Duration.nanoseconds(intervalNanos)
        return measureWindow(fires: fires) {
            let clock = ContinuousClock()
            let base = clock.now
            let origin = Clock.monotonic()
            for index in firstAfter.indices {
                var deadline = base + .nanoseconds(afterNanos(index))
                let id = Int32(index)
                tasks.append(Task.detached {
                    // Until the sleep throws: the task was cancelled.
                    while (try? await Task.sleep(until: deadline, tolerance: tolerance, clock: .continuous)) != nil {
                        fires.increment()
                        log?.record(id)
                        deadline += interval
                    }
                })
            }
            return origin
        } stop: {
            let all = tasks
            for task in all { task.cancel() }
            blockingAwait { for task in all { await task.value } }
        }
    }

    /// One task per timer iterating an `AsyncTimerSequence` on the suspending clock, its phase
    /// set by a first sleep; its grid starts at its first `next()`, just after the task notes it.
    func timerSequence(log: FireLog?) -> Outcome {
        let fires = AtomicCounter()
        let firstFires = FireLog(capacity: firstAfter.count)
        var tasks: [Task<Void, Never>] = []
        let tolerance: Duration = .seconds(double: self.tolerance)
        let interval = Duration.nanoseconds(intervalNanos)
        let intervalNanos = self.intervalNanos
        var outcome = measureWindow(fires: fires) {
            let clock = SuspendingClock()
            let base = clock.now
            let origin = Clock.monotonic()
            for index in firstAfter.indices {
                let phase = base + .nanoseconds(afterNanos(index)) - interval
                let id = Int32(index)
                tasks.append(Task.detached {
                    try? await clock.sleep(until: phase)
                    firstFires.record(id, value: Clock.monotonic() + intervalNanos)
                    for await _ in AsyncTimerSequence(interval: interval, tolerance: tolerance, clock: clock) {
                        fires.increment()
                        log?.record(id)
                    }
                })
            }
            return origin
        } stop: {
            let all = tasks
            for task in all { task.cancel() }
            blockingAwait { for task in all { await task.value } }
        }
        for (id, first) in firstFires.entries { outcome.firstFire[id] = first }
        return outcome
    }
}

/// One timer on NIO's event loop: a `scheduleTask(deadline:)` re-armed at the next grid
/// point by its own callout, which carries its deadline.
final class NIOTimer: Sendable {
    let id: Int32
    let interval: Int64
    let fires: AtomicCounter
    let log: FireLog?
    /// The task armed last, used on the event loop's thread only (the box checks it).
    private let scheduled: NIOLoopBoundBox<Scheduled<Void>?>
    /// Set by ``cancel()``: a task NIO took out of its queue before the cancel, to run in
    /// the same batch, runs anyway, and must not arm the next one.
    private let cancelled = Atomic<Bool>(false)

    init(id: Int32, interval: Int64, fires: AtomicCounter, log: FireLog?, loop: any EventLoop) {
        self.id = id
        self.interval = interval
        self.fires = fires
        self.log = log
        scheduled = .makeEmptyBox(valueType: Scheduled<Void>.self, eventLoop: loop)
    }

    /// Arms the timer for `deadline`; on the event loop's thread.
    func arm(at deadline: NIODeadline, on loop: any EventLoop) {
        scheduled.value = loop.scheduleTask(deadline: deadline) { [self] in
            guard !cancelled.load(ordering: .relaxed) else { return }
            fires.increment()
            log?.record(id)
            arm(at: deadline + .nanoseconds(interval), on: loop)
        }
    }

    /// Cancels the armed task; on the event loop's thread.
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        scheduled.value?.cancel()
        scheduled.value = nil
    }
}
