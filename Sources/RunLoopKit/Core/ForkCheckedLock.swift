import RunLoopKitPlatform
import Synchronization

/// A mutex that a forked child's loop takes: in a child whose copy was held at the `fork()`
/// by a thread of the parent, taking it stops the program with a message that names the
/// lock and `fork()`, where the module's `Mutex` would wait for good (the holder is not in
/// the child; its try answers busy, which is how this lock tells).
///
/// The lock is taken without waiting first (the uncontended path costs what `withLock`
/// costs). Contention in the process the lock was last taken in after a contention
/// (``provenAt``, a fork count: the process that made it, at first) waits as `withLock` does.
/// Contention in a forked child since then is retried for a bounded time: a thread of the
/// child (one made after the fork) lets go at once, and the lock is then proven
/// in this process; a copy held at the fork is never let go, and the program stops. The
/// copied state it guards is as the parent's holder left it, mid-change, so it is never
/// read. sd-event's counterpart refuses use after a fork (`-ECHILD`); libev requires
/// `ev_loop_fork` and a program quiescent at the fork; GLib has none. `package`, for
/// RunLoopKitGLib's process-wide record of hosted contexts and attached loops.
package struct ForkCheckedLock<Value: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>
    /// The process's fork count (``ProcessForks/generation``) when the lock was made, or last
    /// taken after a contention: contention in that process is by a thread of its own.
    private let provenAt = Atomic<UInt32>(ProcessForks.generation)
    /// What the lock guards, for the message: "the loop's inbox (…)".
    private let name: StaticString

    /// A lock guarding `value`, named `name` in the message of a child that cannot take it.
    package init(_ value: consuming sending Value, name: StaticString) {
        mutex = Mutex(value)
        self.name = name
    }

    /// Runs `body` with the value while holding the lock, as `Mutex.withLock`; stops the
    /// program in a forked child whose copy of the lock a thread of the parent held.
    @inline(__always)
    package borrowing func withLock<Result>(_ body: (inout sending Value) -> sending Result) -> sending Result {
        if let result = mutex.withLockIfAvailable(body) { return result }
        // Out of line and without `body`, so that the caller's fast path stays as it was.
        waitUnlessCopiedHeld()
        return mutex.withLock(body)
    }

    /// Runs `body` with the value if the lock is free now, as `Mutex.withLockIfAvailable`;
    /// nil without running it while another thread holds it (in a forked child, also a copy
    /// a thread of the parent held at the fork: never free).
    @inline(__always)
    package borrowing func withLockIfAvailable<Result>(_ body: (inout sending Value) -> sending Result) -> sending Result? {
        mutex.withLockIfAvailable(body)
    }

    /// When another thread holds the lock: returns at once in the process the lock is proven
    /// in (the caller then waits for it); in a forked child, once the lock was free (it is
    /// then proven here), or stops the program after the bounded retries.
    @inline(never)
    private borrowing func waitUnlessCopiedHeld() {
        let now = ProcessForks.generation
        if provenAt.load(ordering: .relaxed) == now { return }
        for attempt in 0..<Self.attempts {
            if mutex.withLockIfAvailable({ _ in true }) != nil {
                provenAt.store(now, ordering: .relaxed)
                return
            }
            if attempt < 100 { ThreadPause.yield() } else { ThreadPause.sleep(microseconds: 1_000) }
        }
        misuse(
            "RunLoopKit: after fork(), this child's copy of \(name) is held by a thread of the parent's, "
                + "which the child does not have, so the loop can never take it (its contents are as that "
                + "thread left them, mid-change). Fork before starting the threads that use the loop, "
                + "or call exec in the child (sd-event refuses use after fork, -ECHILD; libev requires "
                + "ev_loop_fork and a program quiescent at the fork)")
    }

    /// How many times a child tries the lock before the program stops: it yields the first
    /// tries, then sleeps a millisecond between them.
    // Computed, not a `static let`: that is made under `swift_once`, a fork hazard itself (ForkPreparation).
    private static var attempts: Int { 1_100 }
}
