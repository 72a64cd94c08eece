/// Every workload, in the order: its `--only` name, a one-line description for
/// the report, and the function that measures it on all three peers.
struct Workload: Sendable {
    let name: String
    let summary: String
    let measure: @Sendable (Plan) -> [Row]

    static let all: [Workload] = [
        Workload(name: FireThroughput.name,
                 summary: "N repeating timers, 1 ms interval, started together; CPU time of the loop thread per fire, fires/s achieved vs asked.",
                 measure: FireThroughput.measure),
        Workload(name: ScheduleCost.name,
                 summary: "create + add N one-shot timers (random 1–2 s), then invalidate all in random order; wall ns per timer (second of two rounds on one thread).",
                 measure: ScheduleCost.measure),
        Workload(name: Coalescing.name,
                 summary: "1,000 timers, 0.2 s interval, random phases, tolerance 0 and 0.1 s (libev: ev_set_timeout_collect_interval); loop wakes/s, voluntary switches/s (getrusage RUSAGE_THREAD), CPU %, lateness.",
                 measure: Coalescing.measure),
        Workload(name: Precision.name,
                 summary: "one 10 ms repeating timer; lateness after each scheduled fire.",
                 measure: Precision.measure),
        Workload(name: AlignedPhase.name,
                 summary: "timer on the wall-clock grid (EVTimer(alignedTo:), ev_periodic, Timer(fire:) at the next grid point); phase after the grid point.",
                 measure: AlignedPhase.measure),
        Workload(name: CrossThreadWake.name,
                 summary: "another thread wakes the sleeping loop (wakeUp / ev_async_send / CFRunLoopWakeUp, or perform); latency to the callout.",
                 measure: CrossThreadWake.measure),
        Workload(name: PassOverhead.name,
                 summary: "idle passes with one observer per activity (CF observers for Foundation; libev: ev_prepare + ev_check); ns per pass.",
                 measure: PassOverhead.measure),
        Workload(name: MemoryPerTimer.name,
                 summary: "100k timers added to a loop in a child process; resident and malloc growth per timer.",
                 measure: MemoryPerTimer.measure),
    ]
}
