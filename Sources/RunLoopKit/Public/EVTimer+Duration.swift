import RunLoopKitPlatform

/// The `Duration` forms of the timer's wall-clock alignment, interval and tolerance: the
/// same values as their `TimeInterval` spellings, kept to the nanosecond.
extension EVTimer {
    /// Creates a repeating timer aligned to the wall clock: it fires at every
    /// `k * interval + offset` since 1970 (UTC), for example on every whole second: the
    /// `Duration` spelling of the `TimeInterval` initializer of the same name, exact to the
    /// nanosecond.
    ///
    /// When the wall clock is set, the timer re-aligns to the new clock at the loop's next
    /// wake. This is libev's `ev_periodic` idea with RunLoopKit's precise deadline.
    ///
    /// ```swift
    /// let clock = EVTimer(alignedTo: .seconds(1), tolerance: .milliseconds(5)) { _ in print("tick") }
    /// EVRunLoop.current.add(clock, forMode: .common)
    /// ```
    ///
    /// - Parameters:
    ///   - interval: the grid step, from one nanosecond to 1e9 seconds.
    ///   - offset: the grid's phase, in `[0, interval)`.
    ///   - tolerance: how late the timer may fire (default zero).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the callout, given the timer.
    ///
    /// The corresponding libev watcher is `ev_periodic` with an interval and an offset; CF
    /// has none.
    public convenience init(
        alignedTo interval: Duration, offset: Duration = .zero, tolerance: Duration = .zero,
        label: String? = nil, block: @escaping @Sendable (EVTimer) -> Void
    ) {
        let call = "EVTimer(alignedTo: Duration)"
        require(interval >= .nanoseconds(1) && interval <= .seconds(1_000_000_000),
                "\(call): interval \(interval) must be between 1 ns and 1e9 seconds")
        require(offset >= .zero && offset < interval, "\(call): offset \(offset) must be in [0, \(interval))")
        self.init(
            start: .afterInterval(0), intervalNanos: interval.nanoseconds, repeats: true,
            toleranceNanos: Self.checkedTolerance(nanos: tolerance.nanoseconds, call: call),
            alignmentOffsetNanos: offset.nanoseconds, label: label, block: block)
    }

    /// The time between fires of a repeating timer; zero for a one-shot timer, as in CF.
    /// The `Duration` form of ``interval``, exact to the nanosecond.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopTimerGetInterval`.
    public var intervalDuration: Duration { repeats ? .nanoseconds(intervalNanos) : .zero }

    /// How late the timer may fire. Setting it takes effect at once (safe from any thread);
    /// a negative tolerance stops the program with a message. The `Duration` form of
    /// ``tolerance``, exact to the nanosecond.
    ///
    /// The corresponding CFRunLoop functions are `CFRunLoopTimerGetTolerance` and
    /// `CFRunLoopTimerSetTolerance`.
    public var toleranceDuration: Duration {
        get { .nanoseconds(toleranceNanos) }
        set {
            let nanos = Self.checkedTolerance(nanos: newValue.nanoseconds, call: "EVTimer.toleranceDuration")
            onLoopThread { timer in
                timer.toleranceNanos = nanos
                timer.loop?.engine.reschedule(timer)
            }
        }
    }
}
