#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Synchronization
import RunLoopKitPlatform
import RunLoopKitBackend

/// A run loop with CFRunLoop's semantics — modes, observers, timers with tolerance, sources
/// and blocks — whose waiting is done by libev.
///
/// Each thread has one loop, created on first use (``current``); ``main`` is the main
/// thread's. A loop runs only on its own thread; ``stop()``, ``wakeUp()``,
/// ``perform(inModes:label:_:)``, and adding or invalidating timers and sources are safe
/// from any thread.
///
/// ```swift
/// let loop = EVRunLoop.current
/// let tick = EVTimer(interval: 1, repeats: true) { _ in print("tick") }
/// loop.add(tick, forMode: .default)
/// loop.run(mode: .default, for: .seconds(3))
/// ```
///
/// For tests, ``init(clock:)`` makes a loop on an ``EVVirtualClock``: it jumps from deadline
/// to deadline instead of sleeping.
///
/// After `fork()`, the child's one thread keeps its loop: its timers, sources and (forked
/// from the main thread) ``main`` with the main queue work in the child, on kernel objects
/// of its own, made at its first wait (libev's `ev_loop_fork`); new threads get new loops.
/// The loops of the parent's other threads are theirs: running one stops with a message.
///
/// The corresponding CFRunLoop type is `CFRunLoop` (`RunLoop` in Foundation).
public final class EVRunLoop: @unchecked Sendable {
    // Safe to share: `engine`, which holds all loop-thread state, is touched only on `owner`
    // (checked by `isOwnerThread` at every public entry point; other threads hand it tasks
    // through `shared.inbox`); the rest is immutable, or `Sendable` (`shared`).

    let backend: any Backend
    /// The owning thread's ``ThreadLoops/id``: never reused, unlike a `pthread_t`.
    let owner: UInt64
    /// Whether this is ``main``, the one loop that services libdispatch's main queue.
    let isMainLoop: Bool
    /// The loop-thread state and the code of the pass; touched only on `owner`.
    let engine: LoopEngine
    /// The loop as an actor's serial executor.
    let actorExecutor = LoopActorExecutor()

    /// What other threads hand to the loop: its inbox, stop request and wake flags.
    let shared: LoopShared
    /// The thread ``startThread(name:)`` made for the loop, if it made one; set once, by
    /// that call, before it returns the loop. Taken by a shutdown: a forked child whose copy
    /// a thread of the parent held at the fork refuses to take it (``ForkCheckedLock``).
    let hostThread = ForkCheckedLock<LoopThreadHost?>(
        nil, name: "the loop's thread host (the thread that startThread(name:) made for it)")
    /// The loop's metrics (``recordsMetrics``), made the first time they are turned on and
    /// kept: other threads read them through this (``metrics``).
    let metricsStore = AtomicLazyReference<LoopMetrics>()

    /// Records every activity and callout of this loop while set. Loop thread only.
    public var trace: Trace? {
        get { engine.trace }
        set { engine.trace = newValue }
    }

    init(backend: any Backend, owner: UInt64, isMainLoop: Bool = false) {
        self.backend = backend
        self.owner = owner
        self.isMainLoop = isMainLoop
        shared = LoopShared(owner: owner)
        engine = LoopEngine(backend: backend, shared: shared, isMainLoop: isMainLoop)
        engine.attach(to: self)
        shared.attach(to: self)
        actorExecutor.loop = self
    }

    /// Work other threads handed over that the loop never ran can run no more: it goes with
    /// the loop. (A timer's add from another thread, left in the inbox, holds the timer,
    /// whose link keeps the shared state, which holds the inbox: kept, it would never be freed.)
    deinit { withExtendedLifetime(closeInbox()) {} }  // released here, outside the lock

    /// Called on the owner thread as it exits (by ``ThreadLoops``): the loop can never run
    /// again, so everything it holds is let go — queued work (which may capture the loop),
    /// timers, sources (their descriptors and signals unwatched) and observers — and work
    /// queued later is dropped. Otherwise a timer or block capturing the loop would keep it,
    /// and its descriptors, alive forever. Timers and sources are not invalidated.
    func ownerThreadExited() {
        let dropped = closeInbox()
        engine.letGoOfEverything()
        withExtendedLifetime(dropped) {}  // released here, outside the lock
    }

    /// Empties the inbox for good (later work is dropped) and returns what it held, for the
    /// caller to release outside the lock.
    private func closeInbox() -> Inbox {
        shared.inbox.withLock { inbox in
            defer { inbox = Inbox(isClosed: true) }
            return inbox
        }
    }

    /// Creates a loop for the calling thread on a virtual clock, for deterministic tests.
    ///
    /// The loop is not the thread's ``current`` loop, except while it runs. Descriptor and
    /// signal sources need the real kernel and cannot be added to it.
    ///
    /// - Parameter clock: the virtual clock the loop reads and moves; several loops may share one.
    public convenience init(clock: EVVirtualClock) {
        let thread = ThreadLoops.current
        self.init(backend: makeVirtualBackend(clock: clock), owner: thread.id)
        thread.adopt(self)
    }

    /// The loop of the calling thread, created on first use; inside a callout, the loop
    /// running it.
    ///
    /// Unavailable in async code: a task runs on whichever thread the executor picks, whose
    /// loop nobody runs. Use ``main`` (serviced with the main actor), or a loop you run on a
    /// thread of your own, pinning actors to it or preferring it as a task executor.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopGetCurrent`.
    @available(*, noasync, message: "a task's thread is the executor's choice and nobody runs its loop; use EVRunLoop.main, or a loop you run on your own thread as an actor's or task's executor")
    public static var current: EVRunLoop {
        let thread = ThreadLoops.current
        if let running = thread.running.last { return running.takeUnretainedValue() }
        if let own = thread.own { return own }
        let loop = thread.id == ThreadLoops.mainThreadID ? main : makeLibevLoop(owner: thread.id)
        thread.own = loop
        return loop
    }

    /// The main thread's loop. Run on the main thread in a common mode, it also services
    /// libdispatch's main queue, as CFRunLoop does: `DispatchQueue.main`, `@MainActor` tasks
    /// and `MainActor.run` then work under ``run(mode:for:returnAfterSourceHandled:)``.
    /// Run it from a synchronous `main`: an `async` main ends in `dispatchMain()`, which
    /// exits the main thread. As in CF, its common modes are never empty: a run of one ends
    /// at its deadline or on ``stop()``.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopGetMain`.
    public static let main: EVRunLoop = makeLibevLoop(owner: ThreadLoops.mainThreadID, isMainLoop: true)

    private static func makeLibevLoop(owner: UInt64, isMainLoop: Bool = false) -> EVRunLoop {
        do {
            return EVRunLoop(backend: try makeLibevBackend(), owner: owner, isMainLoop: isMainLoop)
        } catch {
            misuse("EVRunLoop: cannot create the libev loop: \(error)")
        }
    }

    /// Whether the calling thread is the one this loop runs on.
    package var isOwnerThread: Bool { ThreadLoops.currentID == owner }

    /// Whether the loop waits on the kernel (descriptors and signals), not an ``EVVirtualClock``.
    package var watchesKernelEvents: Bool { backend.watchesKernelEvents }

    func checkOwner(_ call: @autoclosure () -> String) {
        require(isOwnerThread,
                "EVRunLoop.\(call()) called off the loop's thread; a loop runs only on the thread it belongs to")
    }

    // MARK: Modes

    /// The mode of the innermost run in progress, or nil when the loop is not running.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopCopyCurrentMode`.
    public var currentMode: Mode? {
        checkOwner("currentMode")
        return engine.runStack.last?.mode
    }

    /// The modes that ``Mode/common`` stands for; starts as `[.default]`.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopCopyAllModes` filtered by commonness;
    /// CF keeps the set in `_commonModes`.
    public var commonModes: Set<Mode> {
        checkOwner("commonModes")
        return engine.commonModeSet
    }

    /// Every mode that exists on this loop (created by adding to it, or by making it common
    /// while ``Mode/common`` holds items).
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopCopyAllModes`.
    public var allModes: Set<Mode> {
        checkOwner("allModes")
        return Set(engine.modes.keys)
    }

    /// Makes `mode` common: every observer, timer and source added to ``Mode/common`` is
    /// added to it, now and later. As in CF, this creates the mode only when there are such
    /// items to add.
    ///
    /// - Parameter mode: the mode to make common; not ``Mode/common`` itself.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopAddCommonMode`.
    public func addCommonMode(_ mode: Mode) {
        checkOwner("addCommonMode(_:)")
        require(mode != .common, "EVRunLoop.addCommonMode(_:): .common cannot be made common")
        engine.addCommonMode(mode)
    }

    // MARK: Observers

    /// Adds `observer` to `mode` (or to every common mode, for ``Mode/common``). Adding it
    /// again does nothing. Loop thread only.
    ///
    /// - Parameters:
    ///   - observer: the observer; it serves this loop only from now on.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopAddObserver`.
    public func add(_ observer: EVObserver, forMode mode: Mode) {
        checkOwner("add(_:forMode:)")
        require(observer.isValid,
                "EVRunLoop.add(_:forMode:): observer \(observer.label ?? "") is invalidated")
        require(observer.loop == nil || observer.loop === self,
                "EVRunLoop.add(_:forMode:): observer \(observer.label ?? "") belongs to another loop")
        observer.loop = self
        engine.add(observer, forMode: mode)
    }

    /// Removes `observer` from `mode` (or from every common mode, for ``Mode/common``).
    /// A notification in progress still calls it. Loop thread only.
    ///
    /// - Parameters:
    ///   - observer: the observer.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRemoveObserver`.
    public func remove(_ observer: EVObserver, forMode mode: Mode) {
        checkOwner("remove(_:forMode:)")
        engine.remove(observer, forMode: mode)
    }

    /// Whether `observer` is in `mode` (for ``Mode/common``: whether it was added to it).
    ///
    /// - Parameters:
    ///   - observer: the observer.
    ///   - mode: the mode, or ``Mode/common``.
    /// - Returns: whether the observer is in the mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopContainsObserver`.
    public func contains(_ observer: EVObserver, inMode mode: Mode) -> Bool {
        checkOwner("contains(_:inMode:)")
        if mode == .common { return engine.commonObservers.contains(observer) }
        return engine.modes[mode]?.contains(observer) ?? false
    }

    // MARK: Stopping, waking, blocks

    /// Makes the innermost run return ``RunResult/stopped`` at the end of its current pass
    /// (waking it if it sleeps). With no run in progress it does nothing: CF keeps the stop
    /// flag per run and clears it when a run starts. Safe from any thread.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopStop`.
    public func stop() {
        guard shared.activeRuns.load(ordering: .acquiring) > 0 else { return }
        shared.stopRequested.store(true, ordering: .releasing)
        wakeUp()
    }

    /// Whether a ``stop()`` is pending: requested and not yet seen by a run.
    ///
    /// CF keeps this as the private `_stopped` flag read by `__CFRunLoopIsStopped`.
    public var isStopRequested: Bool { shared.stopRequested.load(ordering: .acquiring) }

    /// Ends the loop's current wait early, or its next one at once when sent while the pass
    /// before that wait runs. As in CF, a wake sent from the end of a wait to the start of the
    /// next pass, or between runs, is dropped: the loop is awake then and checks its inbox,
    /// sources, timers and stop flag before it sleeps again, so nothing waits on such a wake.
    /// Safe from any thread.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopWakeUp` (which drops wakes while the
    /// loop's `ignoreWakeUps` flag is set); the libev backend writes an eventfd, as `ev_async_send` does.
    public func wakeUp() {
        // Pairs with the fence after the loop clears the flag (`heedWakeUps()`): either this
        // call sees the flag clear, or the loop sees what the caller did before calling.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard !shared.ignoreWakeUps.load(ordering: .relaxed) else { return }
        backend.wakeUp()
    }

    /// Queues `block` to run once, in the next pass of a run in one of `modes` (after the
    /// observers of `beforeSources`). From another thread, it also wakes the loop. Safe from
    /// any thread.
    ///
    /// - Parameters:
    ///   - modes: the modes whose runs may run the block; not empty. ``Mode/common`` means the
    ///     common modes.
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the block.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopPerformBlock`
    /// (`RunLoop.perform(inModes:block:)` in Foundation); CF does not wake the loop.
    public func perform(
        inModes modes: consuming [Mode] = [.default], label: consuming String? = nil,
        _ block: consuming @escaping @Sendable () -> Void
    ) {
        require(!modes.isEmpty, "EVRunLoop.perform(inModes:label:_:): modes is empty; the block would never run")
        // The caller's references move into the queued block: no retain here, no release in
        // the caller after the call.
        var queued = Optional(QueuedBlock(modes: modes, label: label, body: block))
        if isOwnerThread {
            engine.blocks.append(queued.take()!)
            if engine.polledRun != nil && !engine.isInPolledCall { engine.blockQueuedWhilePolled = true }
        } else {
            // A wake is sent by the first block since the loop last drained its inbox
            // (``Inbox/isWakeOwed``); later ones ride on it.
            let wakes = shared.inbox.withLock { inbox in
                guard !inbox.isClosed else { return false }
                // Moved in, not copied: a copy would retain its three references.
                inbox.blocks.append(queued.take()!)
                shared.inboxPending.store(true, ordering: .releasing)
                #if DEBUG
                shared.seam(\.performBeforeInboxUnlock)
                #endif
                return inbox.oweWake()
            }
            if wakes { wakeUp() }
        }
    }

    /// Runs `task` on the loop's thread, given the loop's engine, at its next pass or before
    /// its next wait, waking it (unless a wake is owed already: ``Inbox/isWakeOwed``); drops
    /// it if the loop's thread has exited.
    func enqueue(_ task: @escaping @Sendable (LoopEngine) -> Void) {
        if pushTask(task, owingWake: true) { wakeUp() }
    }

    /// Runs `task` on the loop's thread at its next pass or before its next wait; wakes the
    /// loop only if it is sleeping past `latest` (the end of a timer's tolerance), so a timer
    /// that the coming wake serves anyway costs no extra wake. Drops it if the loop's thread
    /// has exited.
    func enqueue(_ task: @escaping @Sendable (LoopEngine) -> Void, wakingIfSleepingPast latest: Int64) {
        guard pushTask(task, owingWake: false) else { return }
        // Pairs with the fence in the pass's `planWait`: either the loop sees this task before
        // it sleeps, or this sees the wait it planned.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let planned = shared.plannedWake.load(ordering: .relaxed)
        // This wake is sent whether or not one is owed: the push did not record one.
        if latest < planned { wakeUp() }
    }

    /// Hands `task` to the inbox; false if the loop's thread has exited, or when
    /// `owingWake`, if a wake is owed already (``Inbox/isWakeOwed``), which the caller then
    /// need not send.
    private func pushTask(_ task: @escaping @Sendable (LoopEngine) -> Void, owingWake: Bool) -> Bool {
        shared.inbox.withLock { inbox in
            guard !inbox.isClosed else { return false }
            inbox.tasks.append(task)
            shared.inboxPending.store(true, ordering: .releasing)
            return owingWake ? inbox.oweWake() : true
        }
    }

    // MARK: wakeDate

    /// The wall-clock moment at which the current pass woke: stamped when a run starts and
    /// right after every wait, before any observer runs, so every observer, timer, source and
    /// block of one pass reads the same value. Nil before the loop first ran. Loop thread only.
    ///
    /// The stamp is ``wakeInstant``; the date is made from it on the pass's first read (the
    /// wall clock then, minus the monotonic time since the wake), so a pass that never reads
    /// it costs one clock reading, not two. It is the date a reading at the wake would have
    /// given, unless the wall clock was set in between.
    ///
    /// This is libev's `ev_now` idea; CF has no counterpart (apps build it from an
    /// `entry`/`afterWaiting` observer, as the wake-date example shows).
    public var wakeDate: Date? {
        checkOwner("wakeDate")
        return engine.lastWakeDate
    }

    /// The moment of ``wakeDate`` on the loop's monotonic clock.
    public var wakeInstant: Instant? {
        checkOwner("wakeInstant")
        return engine.lastWakeInstant
    }

    /// The deadline that ended the wait of the current pass: the instant the loop asked the
    /// kernel to wake it (its timer's expiry; a point of the shared grid with
    /// ``TimerCoalescing/sharedGrid``), or nil when something else ended the wait (a wake-up,
    /// a ready source), the pass polled, or the run has not waited yet. Loop thread only.
    ///
    /// ``wakeInstant`` minus this is how late the thread got to run after the kernel woke
    /// it: on a busy machine, several processes woken at one instant run one after another.
    /// libev has no counterpart (its `ev_now` is the wake); neither has CF.
    public var wakeDeadline: Instant? {
        checkOwner("wakeDeadline")
        return engine.lastWakeDeadline
    }

    /// The loop's monotonic clock now (the virtual clock's reading for a virtual loop).
    public var now: Instant { backend.now() }

    /// The loop's wall clock now (the virtual wall clock for a virtual loop).
    public var wallNow: Date { backend.wallNow() }
}
