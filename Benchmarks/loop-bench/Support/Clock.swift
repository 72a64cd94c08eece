import CLibevBench
import Foundation

/// The clocks and counters every peer is measured with (from `CLibevBench`, so C and Swift
/// read the very same ones).
enum Clock {
    /// `CLOCK_MONOTONIC` in ns (also what `DispatchTime`, `NIODeadline` and `SuspendingClock`
    /// read on Linux).
    static func monotonic() -> Int64 { lb_monotonic_ns() }
    /// `CLOCK_REALTIME` in ns since 1970.
    static func realtime() -> Int64 { lb_realtime_ns() }

    /// A wall-clock `Date` and the monotonic instant (ns) of the same moment, read
    /// back to back (the monotonic reading is the mean of one before and one after).
    static func pairedNow() -> (date: Date, monotonic: Int64) {
        let before = lb_monotonic_ns()
        let date = Date()
        let after = lb_monotonic_ns()
        return (date, before + (after - before) / 2)
    }
}

/// CPU time, wall time and voluntary context switches of the whole process over a window.
///
/// Process-wide, so that peers whose work runs on threads of their own (Dispatch's manager
/// and worker threads, NIO's event loop thread, the concurrency pool) are counted the same
/// way as a loop thread: during a window the thread that starts the run is blocked, and
/// every other thread the benchmark made is idle.
struct ProcessWindow {
    private let cpu0 = lb_process_cpu_ns()
    private let wall0 = lb_monotonic_ns()
    private let switches0 = lb_process_voluntary_switches()

    /// Closes the window.
    func end() -> (cpuNanos: Int64, wallNanos: Int64, voluntarySwitches: Int64) {
        (lb_process_cpu_ns() - cpu0, lb_monotonic_ns() - wall0, lb_process_voluntary_switches() - switches0)
    }
}
