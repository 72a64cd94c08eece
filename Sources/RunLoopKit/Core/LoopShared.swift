import Synchronization

/// The part of a loop that other threads touch: the inbox they hand work to, the stop
/// request, CF's wake flags, and the wait in progress. Shared by the facade (``EVRunLoop``,
/// which other threads call) and the engine (``LoopEngine``, which reads it on the loop's
/// thread), so that the engine's passes never go through the facade. Timers and sources
/// that were added to the loop hold it too (``LoopLink``), and reach the loop through it.
final class LoopShared: Sendable {
    /// The facade, weakly: the one weak reference to a loop that its timers and sources share.
    /// Set once, by the facade's initializer, before any other thread can see the loop. A
    /// forked child whose copy a thread of the parent held at the fork refuses to take it
    /// (``ForkCheckedLock``).
    private let facade = ForkCheckedLock(
        WeakLoop(), name: "the loop's facade (the reference through which its timers and sources reach it)")

    /// The loop, or nil once it is gone.
    var loop: EVRunLoop? {
        facade.withLock {
#if DEBUG
            seam(\.loopReadHoldingFacade)
#endif
            return $0.loop
        }
    }

    /// The loop's thread (``EVRunLoop/owner``).
    let owner: UInt64

    init(owner: UInt64) { self.owner = owner }

    /// Called once by the facade's initializer.
    func attach(to loop: EVRunLoop) { facade.withLock { $0.loop = loop } }

    /// What other threads hand to the loop; a forked child whose copy a thread of the parent
    /// held at the fork refuses to take it (``ForkCheckedLock``).
    let inbox = ForkCheckedLock(
        Inbox(), name: "the loop's inbox (the blocks, tasks and jobs that other threads hand to it)")
    let inboxPending = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    /// Set once, by a shutdown (``EVRunLoop/shutdown()``): the stop request then stays set, so
    /// every run on the loop's thread ends, the runs it is nested in and the runs started
    /// afterwards too, as GLib's `g_main_loop_quit` ends a loop whose run is nested under others.
    let stopsEveryRun = Atomic<Bool>(false)
    /// CF's `ignoreWakeUps` per-run flag: set from the end of each wait to the top of the next
    /// pass, and between outermost runs; ``EVRunLoop/wakeUp()`` does nothing while it is set.
    let ignoreWakeUps = Atomic<Bool>(true)
    /// The latest instant the wait in progress may end (nanoseconds): `.min` while the loop
    /// is awake, since it drains its inbox before it sleeps again.
    let plannedWake = Atomic<Int64>(.min)
    /// Runs in progress (nested ones included); a stop with none in progress is dropped (``EVRunLoop/stop()``).
    let activeRuns = Atomic<Int>(0)
#if DEBUG
    /// The tests' hooks into race windows (``TestSeams``).
    let seams = Mutex(TestSeams())
#endif

    /// How many ``LoopLink``s hold this state. They hold it through one reference, taken
    /// when the count leaves 0 and let go of when it comes back: a claim then costs one
    /// atomic add, not a call of `swift_retain` (PROFILING.md, "Tricks and what they earn").
    /// Each count leaving 0 retains once and each coming back releases once, so the two
    /// balance in any interleaving; a link is only counted in (``linked()``) by a caller
    /// that holds the state (the loop adding to itself), so that the state is alive then.
    private let links = Atomic<Int>(0)

    /// Counts a link in; the caller holds the state.
    @inline(__always)
    func linked() {
        if links.wrappingAdd(1, ordering: .relaxed).oldValue == 0 { _ = Unmanaged.passUnretained(self).retain() }
    }

    /// Counts a link out (it no longer reads the state).
    @inline(__always)
    func unlinked() {
        if links.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            Unmanaged.passUnretained(self).release()
        }
    }
}

/// A weak reference to a loop: the shared state's one reference to its loop, and
/// ``ThreadLoops``' references to the virtual loops a thread adopted.
struct WeakLoop {
    weak var loop: EVRunLoop?
}
