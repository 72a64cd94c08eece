// RunLoopKitExperimental: RunLoopKit on the toolchain's experimental executor SPIs. Opt in by
// depending on this product; RunLoopKit itself never does. The SPIs may change or vanish in any
// toolchain release, so everything here is compiled only by Swift 6.3 or later.
#if compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import RunLoopKit

/// The main loop as the main actor's executor: `MainActor` jobs become jobs of
/// `EVRunLoop.main` (run after the blocks of its common modes) instead of work
/// items of libdispatch's main queue.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
@_spi(Experimental) extension EVRunLoop: RunLoopExecutor, MainExecutor {}

/// A loop schedules delayed jobs on its own timers, so `Task.sleep(for:tolerance:)` in a task
/// that prefers the loop (or on an actor pinned to it) is one of the loop's coalescing timers,
/// tolerance honoured. On Linux, libdispatch drops the tolerance of `Task.sleep` entirely.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
@_spi(Experimental) extension EVRunLoop: SchedulingExecutor {
    /// Runs `job` on the loop after `delay` on `clock`, within `tolerance` (none: exactly),
    /// through a one-shot `EVTimer` in the loop's common modes. As for `loop.clock`, the
    /// timer's tolerance leaves a hand-off allowance (1/20 of it, at most 2 ms) for the job
    /// to run after the timer fired.
    ///
    /// - Parameters:
    ///   - job: the job to run on the loop's thread.
    ///   - delay: how long to wait, on `clock`.
    ///   - tolerance: how late the job may run; nil for none.
    ///   - clock: the clock of `delay`, measured in `Swift.Duration`.
    public func enqueue<C: _Concurrency.Clock>(_ job: consuming ExecutorJob, after delay: C.Duration,
                                  tolerance: C.Duration?, clock: C) {
        let unowned = UnownedJob(job)
        let timer = EVTimer(interval: Self.duration(delay, on: clock), repeats: false,
                            tolerance: Self.timerTolerance(forSleepTolerance: tolerance.map { Self.duration($0, on: clock) } ?? .zero),
                            label: "Task.sleep") { [self] _ in
            enqueue(ExecutorJob(unowned))
        }
        add(timer, forMode: .common)
    }

    /// Runs `job` on the loop at `instant` of `clock`; see
    /// ``enqueue(_:after:tolerance:clock:)``.
    ///
    /// - Parameters:
    ///   - job: the job to run on the loop's thread.
    ///   - instant: when, on `clock`.
    ///   - tolerance: how late the job may run; nil for none.
    ///   - clock: the clock of `instant`, measured in `Swift.Duration`.
    public func enqueue<C: _Concurrency.Clock>(_ job: consuming ExecutorJob, at instant: C.Instant,
                                  tolerance: C.Duration?, clock: C) {
        enqueue(job, after: clock.now.duration(to: instant), tolerance: tolerance, clock: clock)
    }

    /// `duration` of `clock` as a `Swift.Duration`, not below zero. Clocks measured in
    /// `Swift.Duration` (`ContinuousClock`, `SuspendingClock`, the ones `Task.sleep` uses) only.
    private static func duration<C: _Concurrency.Clock>(_ duration: C.Duration, on clock: C) -> Duration {
        guard let duration = duration as? Duration else {
            fatalError("EVRunLoop.enqueue(_:after:tolerance:clock:): \(C.self) is not measured in Swift.Duration; a loop schedules jobs only on such clocks")
        }
        return max(.zero, duration)
    }
}

/// The executors that put `EVRunLoop.main` under the main actor; the default
/// (global) executor stays the platform's.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
@_spi(Experimental) public enum EVMainLoopExecutorFactory: ExecutorFactory {
    /// `EVRunLoop.main`.
    public static var mainExecutor: any MainExecutor { EVRunLoop.main }
    /// The platform's default executor.
    public static var defaultExecutor: any TaskExecutor { PlatformExecutorFactory.defaultExecutor }
}

@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension EVRunLoop {
    /// Makes `EVRunLoop.main` the main actor's executor (through the toolchain's experimental
    /// `_createExecutors(factory:)`). Call it first thing in a synchronous `main`, before any
    /// task or actor is used, then run `EVRunLoop.main` from there.
    ///
    /// Experimental: the SPI it uses is not stable. There is no CFRunLoop counterpart.
    public static func installAsMainActorExecutor() {
        _createExecutors(factory: EVMainLoopExecutorFactory.self)
    }
}
#endif
