import Synchronization

extension EVRunLoop.Instant: InstantProtocol {
    /// Instants are apart by `Duration`s of the loop's clock.
    public typealias Duration = Swift.Duration

    /// The instant `duration` later, saturating at ``distantFuture``.
    ///
    /// - Parameter duration: how far to move; negative moves back.
    /// - Returns: the instant `duration` after this one.
    public func advanced(by duration: Duration) -> Self { self + duration }

    /// The time from this instant to `other`.
    ///
    /// - Parameter other: the later (or earlier) instant.
    /// - Returns: `other` minus this instant; negative when `other` is earlier.
    public func duration(to other: Self) -> Duration { other - self }
}

extension EVRunLoop {
    /// A `Clock` that reads a loop's monotonic clock and sleeps on the loop's timers.
    ///
    /// A sleep is a one-shot timer in the loop's common modes, with the sleep's tolerance, so
    /// sleeps coalesce with each other and with the loop's other timers by the loop's rule
    /// (one wake serves every timer whose tolerance window it falls in). Nothing else on
    /// Linux honours a sleep's tolerance: libdispatch drops the leeway that
    /// `Task.sleep(for:tolerance:)` passes on.
    ///
    /// ```swift
    /// let clock = loop.clock   // the loop runs on its own thread
    /// try await clock.sleep(for: .milliseconds(200), tolerance: .milliseconds(100))
    /// ```
    ///
    /// - Safe from any task; the loop must be running (in a common mode) for a sleep to end.
    /// - A sleep that is cancelled throws `CancellationError` at once and removes its timer.
    /// - On a loop built on an ``EVVirtualClock``, `now` is the virtual clock and sleeps end
    ///   when a run of the loop advances it past their deadline.
    /// - A sleep wakes a sleeping loop only when it must end before the loop's planned wake;
    ///   otherwise the coming wake serves it.
    /// - The task, not just its timer, resumes within the tolerance: the timer's tolerance is
    ///   the sleep's less a hand-off allowance (1/20 of it, at most 2 ms), the time the task
    ///   may take to run on its executor once the timer resumed it.
    ///
    /// There is no CFRunLoop counterpart; it plays the part of `ContinuousClock` with a
    /// tolerance that really coalesces.
    public struct Clock: _Concurrency.Clock {
        public typealias Duration = Swift.Duration
        public typealias Instant = EVRunLoop.Instant

        /// The loop whose clock and timers this clock uses.
        public let loop: EVRunLoop

        /// Creates the clock of `loop`; the same as `loop.clock`.
        ///
        /// - Parameter loop: the loop whose monotonic clock and timers the clock uses.
        public init(loop: EVRunLoop) { self.loop = loop }

        /// The loop's monotonic clock now.
        public var now: Instant { loop.now }

        /// One nanosecond: deadlines are kept to the nanosecond.
        public var minimumResolution: Duration { .nanoseconds(1) }

        /// Suspends until `deadline`, or up to `tolerance` later when that lets the loop serve
        /// several timers with one wake.
        ///
        /// - Parameters:
        ///   - deadline: the instant on the loop's clock to sleep until; one already past
        ///     ends the sleep at the loop's next pass.
        ///   - tolerance: how late the sleep may end; nil means none.
        /// - Throws: `CancellationError` when the task is cancelled, before or during the sleep.
        public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
            try await loop.sleep(until: deadline, tolerance: tolerance ?? .zero)
        }
    }

    /// This loop's clock: reads ``now``, and sleeps on one-shot timers of this loop.
    public var clock: Clock { Clock(loop: self) }

    /// Suspends the calling task until a one-shot timer on this loop fires, or until the task
    /// is cancelled (then the timer is invalidated and `CancellationError` thrown at once).
    func sleep(until deadline: Instant, tolerance: Duration) async throws {
        let sleeper = SleepingTask()
        let timer = EVTimer(fireAt: deadline, tolerance: Self.timerTolerance(forSleepTolerance: tolerance),
                            label: "sleep") { _ in
            sleeper.finish(throwing: nil)
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if sleeper.start(continuation) { add(timer, forMode: .common) }
            }
        } onCancel: {
            sleeper.finish(throwing: CancellationError())
            timer.invalidate()
        }
    }

    /// The longest a sleep's hand-off may take: resuming its continuation puts the task on
    /// its executor's queue, and the task runs a little later (later still on a busy pool).
    static let handOffAllowance: Duration = .milliseconds(2)

    /// The tolerance of a sleep's timer: the sleep's, less a hand-off allowance (1/20 of it,
    /// at most ``handOffAllowance``), so that the task itself, not just its timer, resumes
    /// within the tolerance it asked for.
    package static func timerTolerance(forSleepTolerance tolerance: Duration) -> Duration {
        guard tolerance > .zero else { return .zero }
        return tolerance - min(tolerance / 20, handOffAllowance)
    }
}
