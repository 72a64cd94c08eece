import CLibevBench

/// Waits until the process is quiet before a measured window: threads left busy by the
/// previous peer (a cancelled task's sleep timer still pending in Dispatch, pool threads
/// winding down) would otherwise be counted against the next one.
enum Quiet {
    /// Returns once a 100 ms stretch passes with at most 2 voluntary context switches in the
    /// process, or after 5 s.
    static func wait() {
        let start = Clock.monotonic()
        while Clock.monotonic() - start < 5_000_000_000 {
            let before = lb_process_voluntary_switches()
            sleepThread(0.1)
            // The sleep itself is one switch of this thread.
            if lb_process_voluntary_switches() - before <= 3 { break }
        }
    }
}
