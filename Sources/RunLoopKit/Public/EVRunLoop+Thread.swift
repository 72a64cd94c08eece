import Dispatch
import Synchronization
import RunLoopKitPlatform

extension EVRunLoop {
    /// Starts a thread, makes its loop and returns it: the loop runs its default mode (and
    /// so what is added to ``Mode/common``) on that thread until ``shutdown()``, kept running
    /// while it holds nothing. This is how an async `main`, a library or a test gets a loop
    /// of its own: add timers and sources from any thread, pin actors to it
    /// (``asUnownedSerialExecutor()``), sleep on its ``clock``. A ``stop()`` ends the current
    /// run, and the thread runs the mode again; only ``shutdown()`` ends the thread.
    ///
    /// ```swift
    /// let loop = EVRunLoop.startThread(name: "worker")
    /// let timer = EVTimer(interval: 0.5, repeats: true, tolerance: 0.05) { _ in print("tick") }
    /// loop.add(timer, forMode: .common)
    /// try? await loop.clock.sleep(for: .seconds(2))
    /// await loop.shutdown()
    /// ```
    ///
    /// - Parameter name: the thread's name (the kernel keeps its first 15 bytes), as `top`
    ///   and debuggers show it.
    /// - Returns: the new thread's loop, already running.
    ///
    /// CFRunLoop has no counterpart (a Cocoa program starts an `NSThread` and runs its
    /// `RunLoop.current` by hand); the pattern is libuv's `uv_thread_create` plus a loop run
    /// in it, sd-event's `sd_event_new` on a new thread, and GLib's `g_thread_new` with a
    /// `GMainContext` pushed as the thread's default and a `GMainLoop` run in it.
    public static func startThread(name: String? = nil) -> EVRunLoop {
        let host = LoopThreadHost()
        let made = Mutex<EVRunLoop?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = JoinableThread(name: name) {
            let loop = EVRunLoop.current
            let keepAlive = EVSource(label: "startThread(name:)") { _ in }
            loop.add(keepAlive, forMode: .default)
            made.withLock { $0 = loop }
            ready.signal()
            while !host.isStopping { loop.run() }
            keepAlive.invalidate()
            // The thread's exit lets go of what the loop still holds (its timers, sources,
            // observers and queued blocks), so nothing keeps the loop or its descriptors.
        }
        ready.wait()
        let loop = made.withLock { $0! }
        host.thread = thread
        loop.hostThread.withLock { $0 = host }
        return loop
    }

    /// Shuts down a loop that ``startThread(name:)`` made: stops it, lets its timers, sources
    /// and observers go (not invalidated: they belong to no loop afterwards), and returns once
    /// its thread has ended (joined). Work handed to the loop later is dropped. Calling it
    /// again, or from several tasks at once, returns when the thread has ended. Every run on
    /// the thread ends: a run nested in a callout (in any mode) returns ``RunResult/stopped``
    /// at the end of its pass, then the run it is nested in, and a run a callout starts
    /// afterwards returns ``RunResult/stopped`` at once; a callout in progress runs to its end.
    ///
    /// Stops the program with a message when called from the loop's own thread (it would
    /// wait for itself), or on a loop ``startThread(name:)`` did not make.
    ///
    /// The corresponding libuv calls are `uv_stop` and `uv_thread_join`; GLib's
    /// `g_main_loop_quit` and `g_thread_join`. CFRunLoop has none (`CFRunLoopStop`, then the
    /// thread's own exit).
    public func shutdown() async {
        let host = hostForShutdown("shutdown()")
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            host.shutDown(self, blocking: false) { done.resume() }
        }
    }

    /// ``shutdown()`` for synchronous code: blocks the calling thread until the loop's thread
    /// has ended. Not from the loop's own thread; from async code, prefer ``shutdown()``.
    ///
    /// The corresponding libuv calls are `uv_stop` and `uv_thread_join`; GLib's
    /// `g_main_loop_quit` and `g_thread_join`.
    public func syncShutdown() {
        let host = hostForShutdown("syncShutdown()")
        let done = DispatchSemaphore(value: 0)
        host.shutDown(self, blocking: true) { done.signal() }
        done.wait()
    }

    /// Ends every run of the loop's thread, in whatever mode, nested or not, and every run
    /// started there from now on: the stop request is set for good and the loop woken. (A
    /// ``stop()`` ends the innermost run only, and is dropped between two runs, CF's rule;
    /// the thread's flag, `LoopThreadHost.isStopping`, ends its loop between runs.)
    func stopEveryRun() {
        // Sequentially consistent: a run's end that overwrites this stop then sees the flag
        // (``LoopEngine/leaveRun(_:)``).
        shared.stopsEveryRun.store(true, ordering: .sequentiallyConsistent)
        shared.stopRequested.store(true, ordering: .sequentiallyConsistent)
        wakeUp()
    }

    private func hostForShutdown(_ call: String) -> LoopThreadHost {
        let host = hostThread.withLock { host in
#if DEBUG
            shared.seam(\.shutdownHoldingHostThread)
#endif
            return host
        }
        guard let host else {
            misuse("EVRunLoop.\(call): this loop was not made by EVRunLoop.startThread(name:); stop a loop you run yourself with stop()")
        }
        require(!isOwnerThread, "EVRunLoop.\(call) called on the loop's own thread, which it would wait for; call it from another thread")
        return host
    }
}

/// The thread ``EVRunLoop/startThread(name:)`` made for a loop: the flag that ends its run,
/// and the join, done once for every caller of ``EVRunLoop/shutdown()``.
final class LoopThreadHost: Sendable {
    private let stopping = Atomic<Bool>(false)
    /// Taken by every shutdown: a forked child whose copy a thread of the parent held at the
    /// fork refuses to take it (``ForkCheckedLock``).
    private let state = ForkCheckedLock(
        State.running, name: "the shutdown state of the loop's thread (whether it runs, is being joined or was)")
    /// Taken by the joiner alone, once the state says joining: a child forked while a thread
    /// of the parent held it finds that state, so its shutdown never takes this copy (it
    /// returns at once).
    private let threadSlot = Mutex<JoinableThread?>(nil)

    private enum State {
        case running
        /// Joining; the callers waiting for the join to end, and the process's fork count
        /// (``ProcessForks/generation``) when it began.
        case joining([@Sendable () -> Void], since: UInt32)
        case joined
    }

    /// Read by the loop's thread between its runs.
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Set once, by ``EVRunLoop/startThread(name:)``, before the loop is returned.
    var thread: JoinableThread? {
        get { threadSlot.withLock { $0 } }
        set { threadSlot.withLock { $0 = newValue } }
    }

    /// Stops `loop`'s thread (the first call), and calls `done` once the thread has been
    /// joined: the first caller joins, on its own thread when `blocking`, else on a thread
    /// of its own (detached), never a libdispatch worker: on Linux the Swift concurrency
    /// global executor and `DispatchQueue.global()` share those, and work that blocks them
    /// would hold the join back; later callers wait for that join.
    func shutDown(_ loop: EVRunLoop, blocking: Bool, done: @escaping @Sendable () -> Void) {
        enum Role { case joiner, waiter, finished }
        let role = state.withLock { state -> Role in
#if DEBUG
            loop.shared.seam(\.shutdownHoldingState)
#endif
            switch state {
            case .running:
                state = .joining([done], since: ProcessForks.generation)
                return .joiner
            case .joining(var waiters, let since):
                // Begun before a fork(): the joiner is a thread of the parent, and so is the
                // loop's, so a child has nothing to wait for (its own join returns at once).
                guard since == ProcessForks.generation else { return .finished }
                waiters.append(done)
                state = .joining(waiters, since: since)
                return .waiter
            case .joined:
                return .finished
            }
        }
        switch role {
        case .finished: done()
        case .waiter: break
        case .joiner:
            stopping.store(true, ordering: .releasing)
            loop.stopEveryRun()
            // The joiner holds the loop's shared state, not the loop: an awaiting caller,
            // resumed by the join, must find the loop gone once it let go of it.
            let shared = loop.shared
            if blocking {
                join(shared)
            } else {
                JoinableThread(name: "EVRunLoop join") { self.join(shared) }.detach()
            }
        }
    }

    private func join(_ shared: LoopShared) {
#if DEBUG
        shared.seam(\.shutdownBeforeJoin)
#endif
        thread?.join()
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            defer { state = .joined }
            if case .joining(let waiters, _) = state { return waiters }
            return []
        }
        for waiter in waiters { waiter() }
    }
}
