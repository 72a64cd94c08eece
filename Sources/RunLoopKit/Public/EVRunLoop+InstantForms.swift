/// The loop's-clock forms of the run loop's wall-clock `Date` and millisecond API: a run's
/// deadline, the next timer's fire date, and a polled pass's timeout.
extension EVRunLoop {
    /// Runs `mode` until `deadline` on the loop's monotonic clock, until ``stop()``, until the
    /// mode has nothing left to fire, or — when `returnAfterSourceHandled` — until a source
    /// fired: the ``Instant`` spelling of the `Date` form of
    /// ``run(mode:until:returnAfterSourceHandled:)-(_,Date,_)``, exact to the nanosecond and untouched by
    /// wall-clock changes. Loop thread only; may be called from inside a callout.
    ///
    /// A deadline at or before ``now`` runs exactly one pass, without sleeping; one more than
    /// about 16 years away (CF's `TIMER_INTERVAL_LIMIT`), such as ``Instant/distantFuture``,
    /// means no deadline. (A bare `.distantFuture` still picks the `Date` form.)
    ///
    /// - Parameters:
    ///   - mode: the mode to run; ``Mode/common`` is not a mode one can run.
    ///   - deadline: when the run times out, on the loop's monotonic clock.
    ///   - returnAfterSourceHandled: whether to return after the first pass in which a source fired.
    /// - Returns: why the run ended.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRunInMode`, whose deadline CF keeps
    /// as `termTSR` on this time base.
    @_disfavoredOverload
    @discardableResult
    public func run(mode: Mode, until deadline: Instant, returnAfterSourceHandled: Bool = false) -> RunResult {
        let call = "run(mode:until: Instant, returnAfterSourceHandled:)"
        checkOwner(call)
        let now = backend.now()
        let runDeadline = RunDeadline.after(nanoseconds: deadline.nanoseconds.saturatingSubtract(now.nanoseconds), from: now)
        return engine.runSpecific(mode: mode, until: runDeadline, stopAfterSource: returnAfterSourceHandled, call: call)
    }

    /// The earliest fire instant among the valid timers of `mode` on the loop's monotonic
    /// clock, or nil if it has none: the ``Instant`` form of ``nextTimerFireDate(forMode:)``.
    /// Loop thread only.
    ///
    /// - Parameter mode: the mode.
    /// - Returns: the earliest fire instant among the mode's timers, or nil when it has none.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopGetNextTimerFireDate`, read on its
    /// `_fireTSR` time base.
    public func nextTimerFireInstant(forMode mode: Mode) -> Instant? {
        checkOwner("nextTimerFireInstant(forMode:)")
        guard let state = engine.modes[mode] else { return nil }
        return state.timers.allTimers.filter(\.isValid).map(\.fireNanos).min().map(Instant.init(nanoseconds:))
    }
}

extension EVRunLoop.PollDeadline {
    /// The deadline as a timeout from `now`: zero for ``now`` or an instant already past, the
    /// exact time to the instant, and nil for ``never`` (no timeout). The `Duration` form of
    /// ``milliseconds(from:)``, for waits that take one (a `Clock`'s sleep, swift-nio's
    /// `TimeAmount`, `ppoll`'s `timespec`).
    ///
    /// - Parameter now: the loop's clock now, ``EVRunLoop/now``.
    /// - Returns: the timeout, or nil for none.
    ///
    /// sd-event's `sd_event_wait` takes the timeout in microseconds; GLib's prepare, in milliseconds.
    public func timeout(from now: EVRunLoop.Instant) -> Duration? {
        switch self {
        case .now: return .zero
        case .never: return nil
        case .at(let instant): return .nanoseconds(max(0, instant.nanoseconds.saturatingSubtract(now.nanoseconds)))
        }
    }
}
