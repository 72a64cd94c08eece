#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension EVRunLoop {
    /// Runs `mode` until `deadline`, until ``stop()``, until the mode has nothing left to
    /// fire, or — when `returnAfterSourceHandled` — until a source fired. Loop thread only;
    /// may be called from inside a callout (a nested run, in any mode).
    ///
    /// A mode without timers, sources or blocks returns ``RunResult/finished`` at once with
    /// no callout. A deadline already past runs exactly one pass, without sleeping.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRunInMode` (Foundation's
    /// `RunLoop.run(mode:before:)` with its result).
    @discardableResult
    public func run(mode: Mode, until deadline: Date, returnAfterSourceHandled: Bool = false) -> RunResult {
        let call = "run(mode:until:returnAfterSourceHandled:)"
        checkOwner(call)
        require(!deadline.timeIntervalSince1970.isNaN, "EVRunLoop.\(call): deadline is NaN")
        let seconds = deadline.timeIntervalSince(backend.wallNow())
        return runSpecific(mode: mode, timeout: seconds, stopAfterSource: returnAfterSourceHandled, call: call)
    }

    /// Runs `mode` for at most `duration`; the `Duration` spelling of
    /// ``run(mode:until:returnAfterSourceHandled:)``, measured on the monotonic clock.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRunInMode(mode, seconds, ...)`.
    @discardableResult
    public func run(mode: Mode, for duration: Duration, returnAfterSourceHandled: Bool = false) -> RunResult {
        let call = "run(mode:for:returnAfterSourceHandled:)"
        checkOwner(call)
        return runSpecific(mode: mode, timeout: duration.seconds, stopAfterSource: returnAfterSourceHandled,
                           call: call)
    }

    /// Runs the default mode until ``stop()`` is called or the mode has nothing left to fire.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRun`.
    public func run() {
        checkOwner("run()")
        while true {
            let result = runSpecific(mode: .default, timeout: .infinity, stopAfterSource: false, call: "run()")
            if result == .stopped || result == .finished { return }
        }
    }
}
