import Synchronization

/// The part of a loop that other threads touch: the inbox they hand work to, the stop
/// request, CF's wake flags, and the wait in progress. Shared by the facade (``EVRunLoop``,
/// which other threads call) and the engine (``LoopEngine``, which reads it on the loop's
/// thread), so that the engine's passes never go through the facade. Timers and sources
/// that were added to the loop hold it too (``LoopLink``), and reach the loop through it.
final class LoopShared: Sendable {
    /// The facade, weakly: the one weak reference to a loop that its timers and sources share.
    /// Set once, by the facade's initializer, before any other thread can see the loop.
    private let facade = Mutex(WeakLoop())

    /// The loop, or nil once it is gone.
    var loop: EVRunLoop? { facade.withLock { $0.loop } }

    /// The loop's thread (``EVRunLoop/owner``).
    let owner: UInt64

    init(owner: UInt64) { self.owner = owner }

    /// Called once by the facade's initializer.
    func attach(to loop: EVRunLoop) { facade.withLock { $0.loop = loop } }

    let inbox = Mutex(Inbox())
    let inboxPending = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    /// CF's `ignoreWakeUps` per-run flag: set from the end of each wait to the top of the next
    /// pass, and between outermost runs; ``EVRunLoop/wakeUp()`` does nothing while it is set.
    let ignoreWakeUps = Atomic<Bool>(true)
    /// The latest instant the wait in progress may end (nanoseconds): `.min` while the loop
    /// is awake, since it drains its inbox before it sleeps again.
    let plannedWake = Atomic<Int64>(.min)
    /// Runs in progress (nested ones included); a stop with none in progress is dropped (``EVRunLoop/stop()``).
    let activeRuns = Atomic<Int>(0)

    /// References held by links (``LoopLink``, one per timer or source the loop claimed) and
    /// by the engine's stash of them (``LoopEngine/takeLinkReference()``). While there are
    /// any, the shared state keeps one strong reference to itself, so that a link reaches it
    /// after the loop is gone. Counted here rather than by Swift's reference count so that
    /// the loop's thread hands them out in batches: a claim on that thread is then free of
    /// atomic operations but its compare-exchange (an atomic retain cost 4.6 ns of a 80 ns add).
    private let linkReferences = Atomic<Int>(0)

    /// Counts `count` more link references. Whoever calls it holds the shared state (so it is
    /// alive when the count leaves 0 and it retains itself).
    func addLinkReferences(_ count: Int) {
        if linkReferences.add(count, ordering: .relaxed).oldValue == 0 { _ = Unmanaged.passRetained(self) }
    }

    /// Counts `count` fewer link references; true when none are left, and the caller must then
    /// release the shared state's reference to itself (`Unmanaged.release()`, once it is
    /// done with it).
    func dropLinkReferences(_ count: Int) -> Bool {
        linkReferences.subtract(count, ordering: .acquiringAndReleasing).newValue == 0
    }
}

/// A weak reference to a loop: the shared state's one reference to its loop, and
/// ``ThreadLoops``' references to the virtual loops a thread adopted.
struct WeakLoop {
    weak var loop: EVRunLoop?
}
