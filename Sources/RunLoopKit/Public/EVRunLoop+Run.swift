#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RunLoopKitPlatform

extension EVRunLoop {
    /// Runs `mode` until `deadline`, until ``stop()``, until the mode has nothing left to
    /// fire, or — when `returnAfterSourceHandled` — until a source fired. Loop thread only;
    /// may be called from inside a callout (a nested run, in any mode).
    ///
    /// A mode without timers, sources or blocks returns ``RunResult/finished`` at once with
    /// no callout. A deadline at or before now (`Date()` included: the comparison is made in
    /// `Date`'s own precision) runs exactly one pass, without sleeping; a later deadline is
    /// converted to the loop's monotonic clock to the nanosecond. A deadline more than about
    /// 16 years away (CF's `TIMER_INTERVAL_LIMIT`) means no deadline.
    ///
    /// - Parameters:
    ///   - mode: the mode to run; ``Mode/common`` is not a mode one can run.
    ///   - deadline: when the run times out, on the wall clock.
    ///   - returnAfterSourceHandled: whether to return after the first pass in which a source fired.
    /// - Returns: why the run ended.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRunInMode` (Foundation's
    /// `RunLoop.run(mode:before:)` with its result).
    @discardableResult
    public func run(mode: Mode, until deadline: Date, returnAfterSourceHandled: Bool = false) -> RunResult {
        let call = "run(mode:until:returnAfterSourceHandled:)"
        checkOwner(call)
        require(!deadline.timeIntervalSinceReferenceDate.isNaN, "EVRunLoop.\(call): deadline is NaN")
        return engine.runSpecific(mode: mode, until: runDeadline(at: deadline), stopAfterSource: returnAfterSourceHandled,
                           call: call)
    }

    /// Runs `mode` for at most `duration`; the `Duration` spelling of
    /// ``run(mode:until:returnAfterSourceHandled:)-(_,Date,_)``, measured on the monotonic clock.
    ///
    /// - Parameters:
    ///   - mode: the mode to run.
    ///   - duration: how long at most; zero or negative runs one pass without sleeping.
    ///   - returnAfterSourceHandled: whether to return after the first pass in which a source fired.
    /// - Returns: why the run ended.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRunInMode(mode, seconds, ...)`.
    @discardableResult
    public func run(mode: Mode, for duration: Duration, returnAfterSourceHandled: Bool = false) -> RunResult {
        let call = "run(mode:for:returnAfterSourceHandled:)"
        checkOwner(call)
        // A zero duration (a poll, the common idle case) needs neither the clock nor the
        // 128-bit conversion.
        let deadline = duration <= .zero ? .poll : RunDeadline.after(nanoseconds: duration.nanoseconds, from: backend.now())
        return engine.runSpecific(mode: mode, until: deadline, stopAfterSource: returnAfterSourceHandled, call: call)
    }

    /// Runs the default mode until ``stop()`` is called or the mode has nothing left to fire.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRun`.
    public func run() {
        checkOwner("run()")
        while true {
            let result = engine.runSpecific(mode: .default, until: .never, stopAfterSource: false, call: "run()")
            if result == .stopped || result == .finished { return }
        }
    }

    /// The run deadline of wall-clock `date`: a poll when `date` is not after now as a `Date`
    /// reads it (so `Date()` always polls, although a `Date` rounds to about 0.24 µs), else
    /// the exact nanoseconds between the two on the monotonic clock.
    private func runDeadline(at date: Date) -> RunDeadline {
        let monotonicNow = backend.now()
        let wallNanos = backend.wallNanos()
        guard date > EVVirtualClock.date(nanoseconds: wallNanos) else { return .poll }
        return .after(nanoseconds: date.nanosecondsSince1970 &- wallNanos, from: monotonicNow)
    }
}
