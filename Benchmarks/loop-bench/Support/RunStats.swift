import CLibevBench

/// What one measured run of a loop did (the Swift twin of `lb_run_stats`).
struct RunStats: Sendable {
    /// Timer callouts in the window.
    var fires: Int
    /// Loop wakes in the window, as the loop counts them: RunLoopKit's
    /// `statistics.wakeups`, libev's `ev_check` callouts, CF's `afterWaiting` callouts.
    var wakes: Int
    /// CPU time of the loop thread (ns).
    var cpuNanos: Int64
    /// Wall time of the window (ns).
    var wallNanos: Int64
    /// Voluntary context switches of the loop thread (`getrusage(RUSAGE_THREAD)`).
    var voluntarySwitches: Int64

    init(fires: Int, wakes: Int, cpuNanos: Int64, wallNanos: Int64, voluntarySwitches: Int64) {
        self.fires = fires
        self.wakes = wakes
        self.cpuNanos = cpuNanos
        self.wallNanos = wallNanos
        self.voluntarySwitches = voluntarySwitches
    }

    init(_ c: lb_run_stats) {
        self.init(fires: Int(c.fires), wakes: Int(c.wakes), cpuNanos: c.cpu_ns, wallNanos: c.wall_ns,
                  voluntarySwitches: c.voluntary_switches)
    }

    var seconds: Double { Double(wallNanos) / 1e9 }
    /// CPU ns per timer fire.
    var cpuPerFire: Double { fires > 0 ? Double(cpuNanos) / Double(fires) : .nan }
    var firesPerSecond: Double { Double(fires) / seconds }
    var wakesPerSecond: Double { Double(wakes) / seconds }
    var switchesPerSecond: Double { Double(voluntarySwitches) / seconds }
    var cpuPercent: Double { Double(cpuNanos) / Double(wallNanos) * 100 }
}
