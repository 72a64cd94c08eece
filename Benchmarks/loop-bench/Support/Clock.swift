import CLibevBench
import Foundation

/// The clocks every peer is measured with (from `CLibevBench`: C and Swift read the same).
enum Clock {
    /// `CLOCK_MONOTONIC` in ns (what `DispatchTime`, `NIODeadline` and `SuspendingClock` read).
    static func monotonic() -> Int64 { lb_monotonic_ns() }
    /// `CLOCK_REALTIME` in ns since 1970.
    static func realtime() -> Int64 { lb_realtime_ns() }

    /// A `Date` and the monotonic instant (ns, the mean of one read before and one after).
    static func pairedNow() -> (date: Date, monotonic: Int64) {
        let before = lb_monotonic_ns()
        let date = Date()
        let after = lb_monotonic_ns()
        return (date, before + (after - before) / 2)
    }
}

/// CPU time, wall time and voluntary context switches of the whole process over a window:
/// process-wide, so that peers working on threads of their own (Dispatch, NIO, the pool)
/// are counted as a loop thread is.
struct ProcessWindow {
    private let cpu0 = lb_process_cpu_ns()
    private let wall0 = lb_monotonic_ns()
    private let switches0 = lb_process_voluntary_switches()

    /// Closes the window.
    func end() -> (cpuNanos: Int64, wallNanos: Int64, voluntarySwitches: Int64) {
        (lb_process_cpu_ns() - cpu0, lb_monotonic_ns() - wall0, lb_process_voluntary_switches() - switches0)
    }
}
