extension EVRunLoop {
    /// Counts of what a loop did: always on (one plain increment per event, on the loop's
    /// thread), read and reset on the loop's thread only. ``EVRunLoop/runUntilIdle(inMode:)``
    /// relies on them, and tests, the examples and the benchmark read them with metrics off.
    ///
    /// ``Metrics`` counts passes (``Metrics/passes``) and callouts by kind too, but only while
    /// ``EVRunLoop/recordsMetrics`` is on, as atomics that other threads read, reset by their
    /// reporter: its callout counts come with each callout's clock readings, which always-on
    /// counts must not pay. Read these on the loop's thread; read ``Metrics`` from elsewhere.
    ///
    /// There is no CFRunLoop counterpart; libev's `ev_iteration` counts passes the same way.
    public struct Statistics: Hashable, Sendable {
        /// Passes of the run loop (iterations of CF's `__CFRunLoopRun` loop).
        public var passes = 0
        /// Waits that could sleep (not polling passes): the loop's wakeups.
        public var wakeups = 0
        /// Timer callouts.
        public var timerFires = 0
        /// Source callouts.
        public var sourceFires = 0
        /// Observer callouts.
        public var observerCallouts = 0
        /// Blocks run.
        public var blocksRun = 0
        /// Jobs of the loop's executor run.
        public var jobsRun = 0
        /// Times the main loop ran libdispatch's main queue.
        public var mainQueueDrains = 0

        /// All zeros.
        public init() {}
    }

    /// What this loop did since it was created or ``resetStatistics()`` was called.
    /// Loop thread only.
    public var statistics: Statistics {
        checkOwner("statistics")
        return engine.stats
    }

    /// Sets every counter of ``statistics`` back to zero. Loop thread only.
    public func resetStatistics() {
        checkOwner("resetStatistics()")
        engine.stats = Statistics()
    }
}
