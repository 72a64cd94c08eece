import Glibc

/// Blocking sleeps, for the simulated slow work of the examples' sessions.
public enum ThreadSleep {
    /// Sleeps the calling thread for `duration` (to the nanosecond), resuming after signals
    /// until the whole duration has passed.
    public static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 { request = remaining }
    }
}
