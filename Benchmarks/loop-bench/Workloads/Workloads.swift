/// Every workload, in the order: its `--only` name, a one-line description for
/// the report, the function that measures it on every peer, and, for a workload that
/// measures in child processes of this binary (``Children``), the child's entry point.
///
/// A workload with rows measured in interleaved RunLoopKit/libev pairs (``Pairs``): its
/// `child` takes a peer key first and prints that peer's figures.
///
/// A multi-process workload: its `measure` calls `Children.run(name, count: P) { index in
/// [arguments] }`, and its `child` does one process's part and prints the result.
struct Workload: Sendable {
    let name: String
    let summary: String
    let measure: @Sendable (Plan) -> [Row]
    var child: (@Sendable ([String]) -> Void)? = nil

    static let all: [Workload] = [
        Workload(name: FireThroughput.name,
                 summary: "N repeating timers (above 100k: RunLoopKit and libev only), 1 ms interval, started together; CPU time of the process per fire, fires/s achieved vs asked.",
                 measure: FireThroughput.measure, child: FireThroughput.child),
        Workload(name: ScheduleCost.name,
                 summary: "create + add N one-shot timers (random 1–2 s; above 100k: RunLoopKit and libev only), then invalidate all in random order; wall ns per timer (second of two rounds on one thread).",
                 measure: ScheduleCost.measure, child: ScheduleCost.child),
        Workload(name: Instructions.name,
                 summary: "instructions per fire (N repeating 1 ms timers), per create + add and per invalidate (random 1–2 s one-shots), RunLoopKit and raw libev, counted by valgrind's callgrind inside the measured functions of `loop-bench --probe` (skipped, with a note in the row, when valgrind is not installed).",
                 measure: Instructions.measure),
        Workload(name: Coalescing.name,
                 summary: "1,000 timers, 0.2 s interval, random phases, tolerance 0 and 0.1 s (libev: ev_set_timeout_collect_interval, Dispatch: leeway); wakes/s = voluntary context switches of the process (getrusage RUSAGE_SELF), CPU %, lateness.",
                 measure: Coalescing.measure, child: Coalescing.child),
        Workload(name: Precision.name,
                 summary: "one 10 ms repeating timer; lateness after each scheduled fire.",
                 measure: Precision.measure),
        Workload(name: AlignedPhase.name,
                 summary: "timer on the wall-clock grid (EVTimer(alignedTo:), ev_periodic; by hand: Timer(fire:) at the next grid point, DispatchSourceTimer on a wallDeadline, NIO and Task.sleep re-armed from the wall clock, AsyncTimerSequence after a first sleep); phase after the grid point.",
                 measure: AlignedPhase.measure),
        Workload(name: CrossThreadWake.name,
                 summary: "another thread wakes the sleeping loop (wakeUp / ev_async_send / CFRunLoopWakeUp); latency to the callout.",
                 measure: CrossThreadWake.measure),
        Workload(name: PassOverhead.name,
                 summary: "idle passes with one observer per activity (CF observers for Foundation; libev: ev_prepare + ev_check); ns per pass.",
                 measure: PassOverhead.measure, child: PassOverhead.child),
        Workload(name: MemoryPerTimer.name,
                 summary: "100k timers (and 1M: RunLoopKit and libev only) added in a child process (Dispatch timer sources, NIO scheduled tasks, a sleeping task each for Task.sleep and AsyncTimerSequence); resident and malloc growth per timer.",
                 measure: MemoryPerTimer.measure, child: MemoryPerTimer.child),
        Workload(name: DescriptorSources.name,
                 summary: "N idle eventfds + 1 active pipe, read sources on each (EVSource, ev_io, DispatchSourceRead, NIO pipe channels); add cost, write → handler latency (another thread writes, 0.5 ms apart), handler calls/s when the handler writes back each byte it reads.",
                 measure: DescriptorSources.measure, child: DescriptorSources.child),
        Workload(name: ExecutorJobs.name,
                 summary: "closures sent from another thread (perform, RunLoop.perform + CFRunLoopWakeUp, serial queue async, NIO execute, Task.detached): latency one at a time, CPU per job in a burst; actor calls on a loop's SerialExecutor (RunLoopKit, NIO); tasks started on RunLoopKit's loop as TaskExecutor vs Task.detached.",
                 measure: ExecutorJobs.measure, child: ExecutorJobs.child),
        Workload(name: AsyncSleeps.name,
                 summary: "1,000 tasks looping on a 0.2 s sleep with 0.1 s tolerance (loop.clock, Task.sleep(for:tolerance:), AsyncTimerSequence); wakes/s, CPU, lateness.",
                 measure: AsyncSleeps.measure),
        Workload(name: MachineCoalescing.name,
                 summary: "P processes (1, 4, 8) at once, each with 1,000 timers of 0.2 s and 0.1 s tolerance at random phases (RunLoopKit .sharedGrid and .perLoop, libev's collect interval, Dispatch's leeway); one process's wakes/s, the machine's distinct wake instants/s (1 ms buckets) and 5 ms clusters/s, early fires, lateness past the tolerance; three interleaved runs of 8 s per figure (median and spread).",
                 measure: MachineCoalescing.measure, child: MachineCoalescing.child),
        Workload(name: ChildExits.name,
                 summary: "/bin/true children started one after another with posix_spawn (EVSource(childProcess:), ev_child on libev's default loop, Process.run + waitUntilExit); spawn → exit handler latency; zombies and descriptors left after 10,000 children. Each run a child process of its own.",
                 measure: ChildExits.measure, child: ChildExits.child),
        Workload(name: FileChanges.name,
                 summary: "a watched file in a temporary directory (EVSource(watching:), ev_stat at its default interval: inotify and a stat per event); write → handler latency of one-byte appends made one at a time by another thread, and the callouts for a burst of 1,000 appends (RunLoopKit with a 50 ms tolerance, ev_stat without). Interleaved pairs of child processes.",
                 measure: FileChanges.measure, child: FileChanges.child),
        Workload(name: IdleCallouts.name,
                 summary: "one idle source counting to N callouts, then stopping the run (EVSource.idle, ev_idle), with nothing else in the loop and with an idle pipe watched; CPU time of the process per callout. Interleaved pairs of child processes.",
                 measure: IdleCallouts.measure, child: IdleCallouts.child),
        Workload(name: GLibBothWays.name,
                 summary: "GLib both ways, on the main thread of a child process: DispatchQueue.main / @MainActor latency from another thread under g_main_loop_run (RunLoopKit attached, a 10 ms polling tickler, an idle re-armed by hand; GLib's own g_idle_add as reference); idle wakes/s and CPU; a g_timeout_add(10)'s lateness hosted in EVRunLoop.main.run() vs g_main_loop_run; wakes/s of 1,000 timers (0.2 s, tolerance 0.1 s) attached.",
                 measure: GLibBothWays.measure, child: GLibBothWays.child),
        Workload(name: GLibIterationCost.name,
                 summary: "CPU per GLib iteration (a 1 ms g_timeout_add) beside 0, 200 and 1,000 idle g_unix_fd_add watches: GLib hosted in EVRunLoop.main.run() and RunLoopKit attached to g_main_loop_run, against GLib's own g_main_loop_run, interleaved child processes; and callgrind's user-space instructions per iteration of the same runs.",
                 measure: GLibIterationCost.measure, child: GLibIterationCost.child),
        Workload(name: Observing.name,
                 summary: "the fire workload at N = 1,000 with RunLoopKit's loop recording nothing, its metrics, or a trace (issue 28): CPU per fire in interleaved triples of child processes, their ratios, and callgrind's instructions per fire.",
                 measure: Observing.measure, child: Observing.child),
    ]
}
