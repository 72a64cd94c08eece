import Glibc
import Synchronization

extension EVRunLoop {
    /// Suspends the calling task until the child process `pid` exits, and returns how it
    /// ended; the child is reaped (no zombie is left).
    ///
    /// A child source (``EVSource/init(childProcess:label:handler:)``) in the loop's common
    /// modes does the waiting, so the loop must be running (in a common mode) for the call to
    /// return; it waits for `pid` only, never for another child.
    ///
    /// ```swift
    /// let exit = try await loop.waitForExit(ofChild: pid)   // the loop runs on its own thread
    /// print(exit)   // exited(3), or signalled(9)
    /// ```
    ///
    /// - Parameter pid: a child of this process, not reaped yet.
    /// - Returns: the child's exit status, or the signal that terminated it.
    /// - Throws: `CancellationError` at once when the task is cancelled, before or during the
    ///   wait (the source is invalidated; the child, if still running, stays unreaped);
    ///   ``EVRunLoop/Error`` naming `waitid` when `pid` is not a child of this process, or
    ///   when another part of the program reaped it first.
    /// - Precondition: `pid` is positive, and the loop is not on an ``EVVirtualClock``.
    ///
    /// CF has no counterpart. libev's is an `ev_child` watcher, sd-event's
    /// `sd_event_add_child_pidfd`, GLib's `g_child_watch_add`; Foundation's
    /// `Process.waitUntilExit` blocks its thread instead.
    public func waitForExit(ofChild pid: pid_t) async throws -> EVSource.ChildExit {
        try await waitForExit(ofChild: pid, usingPidfd: true)
    }

    /// ``waitForExit(ofChild:)``, with `usingPidfd: false` forcing the `SIGCHLD` path (for
    /// its tests).
    func waitForExit(ofChild pid: pid_t, usingPidfd: Bool) async throws -> EVSource.ChildExit {
        let waiter = ResumeOnce<EVSource.ChildExit>()
        let source = try EVSource(childProcess: pid, usingPidfd: usingPidfd, label: "child exit") { source in
            if let exit = source.childExit {
                waiter.finish(.success(exit))
            } else {
                waiter.finish(.failure(source.error ?? Error(call: "EVSource(childProcess: \(pid))", errno: ECHILD)))
            }
        }
        // The add and the cancellation's invalidate never cross (adding an invalidated source
        // is misuse): once cancelled, the source is not added.
        let cancelled = Mutex(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.start(continuation) else { return }
                cancelled.withLock { if !$0 { add(source, forMode: .common) } }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            waiter.finish(.failure(CancellationError()))
            source.invalidate()
        }
    }
}
