import Foundation
import Synchronization

/// A `TaskExecutor` that runs jobs on one thread of its own. Tests that need many tasks to
/// make progress prefer it, so that they do not depend on the cooperative pool, which other
/// tests running in parallel can starve by blocking its two threads (one per core here).
final class ThreadTaskExecutor: TaskExecutor {
    /// One executor for the whole test run; its thread lives as long as the process.
    static let shared = ThreadTaskExecutor()

    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    private init() {
        Thread.detachNewThread { [self] in
            while true {
                available.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }
}
