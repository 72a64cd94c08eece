extension EVRunLoop {
    /// Runs `mode` until the loop's virtual clock reads `target`, firing every timer that
    /// falls due on the way at its exact instant, in order, with every observer, source and
    /// block of those passes; the clock then reads exactly `target`, even when the mode is or
    /// becomes empty (where a plain ``run(mode:for:returnAfterSourceHandled:)`` returns
    /// ``RunResult/finished`` at the last timer). A ``stop()`` ends only the run in progress;
    /// advancing goes on. Loop thread only, on a loop built on an ``EVVirtualClock``.
    ///
    /// - Parameters:
    ///   - target: the instant to advance to; one not after now only runs what is due now.
    ///   - mode: the mode to run (default ``Mode/default``).
    ///
    /// There is no CFRunLoop counterpart; swift-nio's `EmbeddedEventLoop.advanceTime(to:)`
    /// is the model.
    public func advance(to target: Instant, inMode mode: Mode = .default) {
        let call = "advance(to:inMode:)"
        checkOwner(call)
        let clock = virtualClock(call)
        while clock.now < target {
            let result = engine.runSpecific(mode: mode, until: .at(target), stopAfterSource: false, call: call)
            if result == .finished { clock.advance(to: target) }
        }
        runUntilIdle(inMode: mode)
    }

    /// Runs `mode` until the loop's virtual clock has moved by `duration`; see
    /// ``advance(to:inMode:)``.
    ///
    /// - Parameters:
    ///   - duration: how far to move the virtual clock, not negative.
    ///   - mode: the mode to run (default ``Mode/default``).
    public func advance(by duration: Duration, inMode mode: Mode = .default) {
        guard duration >= .zero else {
            fatalError("EVRunLoop.advance(by:inMode:): duration \(duration) is negative")
        }
        advance(to: now + duration, inMode: mode)
    }

    /// Runs polling passes of `mode` until one fires nothing: every timer due now, every
    /// signalled source and every queued block has run, and what they queued too. Time does
    /// not move on a virtual loop. Loop thread only.
    ///
    /// - Parameter mode: the mode to run (default ``Mode/default``).
    public func runUntilIdle(inMode mode: Mode = .default) {
        let call = "runUntilIdle(inMode:)"
        checkOwner(call)
        for _ in 0..<100_000 {
            let before = engine.stats.timerFires + engine.stats.sourceFires + engine.stats.blocksRun
            let result = engine.runSpecific(mode: mode, until: .poll, stopAfterSource: false, call: call)
            if result == .finished || engine.stats.timerFires + engine.stats.sourceFires + engine.stats.blocksRun == before { return }
        }
        fatalError("EVRunLoop.\(call): still busy after 100,000 passes; a callout keeps queueing work for now")
    }

    /// The virtual clock this loop runs on; a programmer error on a real loop.
    private func virtualClock(_ call: String) -> EVVirtualClock {
        guard let clock = backend.virtualTime as? EVVirtualClock else {
            fatalError("EVRunLoop.\(call) needs a loop built on an EVVirtualClock (EVRunLoop(clock:)); the real loop's time cannot be moved")
        }
        return clock
    }
}
