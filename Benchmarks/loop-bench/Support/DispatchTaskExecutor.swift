import Dispatch

/// A `TaskExecutor` that runs each job on one serial Dispatch queue: the jobs workload's
/// Dispatch column for tasks. `Task(executorPreference:)` on it costs what the runtime's
/// executor preference costs (the preference pushed at the task's creation, its job run
/// on a task executor), with Dispatch's wake (a futex) for the hop: the floor of RunLoopKit's
/// `Task(executorPreference: loop)`, whose hop is the loop's eventfd.
final class DispatchTaskExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "loop-bench.task-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
