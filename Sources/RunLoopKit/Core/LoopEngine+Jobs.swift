/// Running the jobs of the loop's executor (``EVRunLoop/enqueue(_:)-(ExecutorJob)``).
///
/// A job waiting to run: the runtime's job, and whether it was queued for an actor pinned to
/// the loop (``LoopActorExecutor``) rather than for a task that prefers the loop.
struct QueuedJob {
    let job: UnownedJob
    let isolated: Bool
}

extension LoopEngine {
    /// Whether a run of `state` runs jobs now and has some waiting: the mode is common and
    /// no job is on the stack.
    func hasRunnableJobs(_ state: ModeState) -> Bool {
        !jobs.isEmpty && !isRunningJobs && state.isCommon
    }

    /// Runs the jobs queued so far, in order; jobs they queue wait for the next point of the
    /// pass that runs jobs. An actor's job runs isolated to the loop, a task's job on the loop
    /// as its task executor. No allocation per job: the two queues swap and keep their capacity.
    func runJobs(_ state: ModeState) {
        guard hasRunnableJobs(state) else { return }
        isRunningJobs = true
        defer { isRunningJobs = false }
        swap(&jobs, &runningJobs)
        let serial = loop.asUnownedSerialExecutor()
        let task = loop.asUnownedTaskExecutor()
        for queued in runningJobs {
            stats.jobsRun += 1
            let mark = beginCallout(.job)
            if queued.isolated {
                queued.job.runSynchronously(isolatedTo: serial, taskExecutor: task)
            } else {
                queued.job.runSynchronously(on: task)
            }
            endCallout(mark)
        }
        runningJobs.removeAll(keepingCapacity: true)
    }
}
