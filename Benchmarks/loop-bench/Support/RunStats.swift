import CLibevBench

/// What one measured run of a loop did (the Swift twin of `lb_run_stats`).
struct RunStats: Sendable {
    /// Timer callouts in the window.
    var fires: Int
    /// CPU time of the process (ns): the threads that do the work (``ProcessWindow``).
    var cpuNanos: Int64
    /// Wall time of the window (ns).
    var wallNanos: Int64
    /// Voluntary context switches of the process (`getrusage(RUSAGE_SELF)`): every time a
    /// working thread went to sleep, which is how wakes are counted for every peer.
    var voluntarySwitches: Int64

    var seconds: Double { Double(wallNanos) / 1e9 }
    /// CPU ns per timer fire.
    var cpuPerFire: Double { fires > 0 ? Double(cpuNanos) / Double(fires) : .nan }
    var firesPerSecond: Double { Double(fires) / seconds }
    var switchesPerSecond: Double { Double(voluntarySwitches) / seconds }
    var cpuPercent: Double { Double(cpuNanos) / Double(wallNanos) * 100 }
}

extension RunStats {
    init(_ c: lb_run_stats) {
        self.init(fires: Int(c.fires), cpuNanos: c.cpu_ns, wallNanos: c.wall_ns, voluntarySwitches: c.voluntary_switches)
    }

    /// The counters of a window: `fires` and what ``ProcessWindow/end()`` returned.
    init(fires: Int, _ window: (cpuNanos: Int64, wallNanos: Int64, voluntarySwitches: Int64)) {
        self.init(fires: fires, cpuNanos: window.cpuNanos, wallNanos: window.wallNanos, voluntarySwitches: window.voluntarySwitches)
    }
}
