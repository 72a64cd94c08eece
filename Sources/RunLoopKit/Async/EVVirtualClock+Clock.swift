import Synchronization

extension EVVirtualClock: Clock {
    public typealias Duration = Swift.Duration
    public typealias Instant = EVRunLoop.Instant

    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends until the virtual clock reaches `deadline`: when a loop on this clock advances
    /// past it, or ``advance(by:)`` / ``advance(to:)`` moves it there by hand. Tolerance
    /// plays no part: virtual wakes are never late.
    ///
    /// - Parameters:
    ///   - deadline: the virtual instant to sleep until; one not after now returns at once.
    ///   - tolerance: ignored.
    /// - Throws: `CancellationError` when the task is cancelled, before or during the sleep.
    ///
    /// Code written against `any Clock<Duration>` can be driven by it in tests; see
    /// ``waitForSleepers(_:)`` to advance only once that code sleeps.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let sleeper = SleepingTask()
        let id = Mutex<UInt64?>(nil)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard sleeper.start(continuation) else { return }
                // The id is recorded before the sleeper can be seen: a cancellation from then
                // on finds it and removes the sleeper before `cancel()` returns.
                let registered = newSleeperID()
                id.withLock { $0 = registered }
                addSleeper(sleeper, id: registered, until: deadline)
                if sleeper.isFinished { removeSleeper(registered) }  // cancelled before the add
                announceSleepers()
            }
        } onCancel: {
            sleeper.finish(throwing: CancellationError())
            if let registered = id.withLock({ $0 }) { removeSleeper(registered) }
        }
    }
}
