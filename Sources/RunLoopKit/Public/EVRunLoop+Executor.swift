/// A loop is a serial executor and a task executor: the jobs of actors pinned to it, and of
/// tasks that prefer it, run on the loop's thread, one at a time, as part of its passes.
///
/// ```swift
/// actor Dashboard {
///     let loop: EVRunLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
///     init(loop: EVRunLoop) { self.loop = loop }
/// }
/// ```
///
/// ```swift
/// Task(executorPreference: loop) { /* nonisolated async code, on the loop's thread */ }
/// ```
///
/// Jobs run only while the loop runs one of its common modes (``commonModes``), right after
/// the blocks queued with ``perform(inModes:label:_:)`` at each point of the pass where those
/// run; each shows as `job` in ``Trace``. A job waiting to run keeps a common mode from being
/// empty, as a queued block does; a task suspended elsewhere does not, so keep a timer or
/// source in the mode (or run for a duration) while you wait for it. A run nested inside a job
/// does not run jobs: an executor's jobs never overlap.
///
/// CFRunLoop has no counterpart; on Apple platforms the main actor's jobs reach the main run
/// loop through the main dispatch queue, which ``main`` services as well.
extension EVRunLoop: SerialExecutor, TaskExecutor {
    /// Queues `job` to run on the loop's thread; from another thread, also wakes the loop.
    /// Safe from any thread. Called by the Swift runtime for tasks that prefer the loop.
    ///
    /// - Parameter job: the job; it runs on the loop's thread in a later pass of a common mode.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(UnownedJob(job), isolated: false)
    }

    /// The loop as the executor of an actor pinned to it:
    /// `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }`.
    ///
    /// The reference is the loop's actor-executor companion, so that the runtime's jobs say
    /// which role they were queued for: an actor's jobs run isolated to it, a preferring
    /// task's nonisolated jobs run without hopping off the loop.
    ///
    /// - Returns: this loop as the executor of an actor (`unownedExecutor`).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        actorExecutor.asUnownedSerialExecutor()
    }

    /// Stops the program, with a message, unless called on the loop's thread: everything
    /// isolated to the loop — its jobs and its callouts — runs there. Makes `assumeIsolated`
    /// and `preconditionIsolated` work in callouts.
    public func checkIsolated() {
        guard isOwnerThread else {
            fatalError("EVRunLoop.checkIsolated(): code isolated to this loop's executor runs on another thread; a loop's jobs and callouts run only on the loop's thread")
        }
    }

    /// Whether the calling code runs on the loop's thread, where everything isolated to the
    /// loop runs.
    ///
    /// - Returns: whether the caller runs on the loop's thread.
    public func isIsolatingCurrentContext() -> Bool? { isOwnerThread }

    /// Queues a job for the loop's thread: `isolated` for an actor pinned to the loop, else
    /// for a task that prefers it. From another thread, wakes the loop unless a wake is owed
    /// already for what the inbox holds (``Inbox/isWakeOwed``).
    func enqueue(_ job: UnownedJob, isolated: Bool) {
        let queued = QueuedJob(job: job, isolated: isolated)
        if isOwnerThread {
            engine.jobs.append(queued)
        } else {
            let wakes = shared.inbox.withLock {
                $0.jobs.append(queued)
                shared.inboxPending.store(true, ordering: .releasing)
                return $0.oweWake()
            }
            if wakes { backend.wakeUp() }
        }
    }
}

/// The loop in its role of an actor's serial executor (what
/// ``EVRunLoop/asUnownedSerialExecutor()`` refers to): the jobs it receives run isolated to it.
final class LoopActorExecutor: SerialExecutor, @unchecked Sendable {
    // Safe to share: `loop` is set once, by the loop's initializer, before the loop can be
    // seen by any other code, and never changes; the loop owns this object.
    unowned(unsafe) var loop: EVRunLoop?

    func enqueue(_ job: consuming ExecutorJob) { loop!.enqueue(UnownedJob(job), isolated: true) }
    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
    func checkIsolated() { loop!.checkIsolated() }
    func isIsolatingCurrentContext() -> Bool? { loop!.isIsolatingCurrentContext() }
}
