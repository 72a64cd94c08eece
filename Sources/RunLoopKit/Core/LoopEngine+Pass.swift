import Synchronization
import RunLoopKitPlatform
import RunLoopKitBackend

/// The run itself: CFRunLoop's `CFRunLoopRunSpecific` and `__CFRunLoopRun`, step for step.
extension LoopEngine {
    /// `CFRunLoopRunSpecific`: the empty-mode check, `entry`, the passes, `exit`.
    func runSpecific(mode: Mode, until deadline: RunDeadline, stopAfterSource: Bool, call: String) -> RunResult {
        drainInbox()
        guard let state = lastRunState?.mode == mode ? lastRunState : stateToRun(mode, call: call),
              !isEmpty(state) else {
            traceEvent(.returned(.finished))
            return .finished
        }
        let frame = enterRun(state)
        defer { leaveRun(frame) }
        notify(.entry, state)
        let result = passes(state, until: deadline, stopAfterSource: stopAfterSource)
        notify(.exit, state)
        traceEvent(.returned(result))
        return result
    }

    /// What a run keeps of the run it is nested in: CF's per-run data of the enclosing run.
    struct RunFrame {
        let thread: ThreadLoops
        let enclosingStop: Bool
        let enclosingIgnoresWakes: Bool
    }

    /// The start of a run of `state`, before `entry`: the loop counts as running the mode
    /// (``EVRunLoop/current``, ``EVRunLoop/currentMode``), its descriptors are armed, the
    /// run starts unstopped and heeding wakes, and the wake is stamped.
    @inline(__always)
    func enterRun(_ state: ModeState) -> RunFrame {
        let thread = ThreadLoops.current
        thread.running.append(facade!)
        runStack.append(state)
        armDescriptors(for: state)
        // CF's per-run data: each run starts unstopped and heeding wakes; the enclosing run's
        // flags come back when this one returns (`__CFRunLoopPushPerRunData` / `PopPerRunData`).
        let enclosingStop = takeStop()
        let enclosingIgnoresWakes = shared.ignoreWakeUps.exchange(false, ordering: .acquiringAndReleasing)
        shared.activeRuns.add(1, ordering: .releasing)
        markWake()
        if metrics != nil, awakeSince == nil { restartAwakeClock() }
        return RunFrame(thread: thread, enclosingStop: enclosingStop, enclosingIgnoresWakes: enclosingIgnoresWakes)
    }

    /// The end of a run, after `exit`: the enclosing run's flags come back, and its mode's
    /// descriptors are armed again.
    @inline(__always)
    func leaveRun(_ frame: RunFrame) {
        shared.activeRuns.subtract(1, ordering: .releasing)
        var everyRun = shared.stopsEveryRun.load(ordering: .acquiring)
#if DEBUG
        shared.seam(\.leaveRunBeforeStopStore)
#endif
        if !everyRun, frame.enclosingStop || shared.stopRequested.load(ordering: .relaxed) {
            shared.stopRequested.store(frame.enclosingStop, ordering: .sequentiallyConsistent)
            // A shutdown between the read above and this store had its stop overwritten: read
            // its flag again. Its two stores and these two accesses are all sequentially
            // consistent, so a stop this store overwrote comes with a flag this load sees.
            everyRun = shared.stopsEveryRun.load(ordering: .sequentiallyConsistent)
        }
        if everyRun {
            // The enclosing run ends too; its pass may be before its wait, and the wake that
            // carried the stop was this run's, so it gets one of its own.
            shared.stopRequested.store(true, ordering: .releasing)
            if runStack.count > 1 { backend.wakeUp() }
        }
        shared.ignoreWakeUps.store(frame.enclosingIgnoresWakes, ordering: .releasing)
        runStack.removeLast()
        frame.thread.running.removeLast()
        if metrics != nil, runStack.isEmpty { metricsFallAsleep(at: backend.measuringNow(anchor: true)) }
        if let outer = runStack.last { armDescriptors(for: outer) }
    }

    /// The state of `mode` for a run (nil if the mode does not exist), remembered in
    /// `lastRunState` so that running the same mode again skips the dictionary lookup.
    private func stateToRun(_ mode: Mode, call: String) -> ModeState? {
        require(mode != .common, "EVRunLoop.\(call): .common is not a mode that can run; run a concrete mode")
        lastRunState = modes[mode]
        return lastRunState
    }

    /// `__CFRunLoopRun`: pass after pass until a result.
    private func passes(_ state: ModeState, until runDeadline: RunDeadline, stopAfterSource: Bool) -> RunResult {
        // A stop() from an `entry` observer.
        if takeStop() { return .stopped }

        let polling: Bool
        let deadline: Int64
        switch runDeadline {
        case .poll: (polling, deadline) = (true, .min)  // a polling pass never waits: no clock read
        case .at(let instant): (polling, deadline) = (false, instant.nanoseconds)
        case .never: (polling, deadline) = (false, .max)
        }
        var mainQueuePort = mainQueuePort(for: state.mode)  // CF's dispatchPort

        while true {
            let start = beginPass(state, polling: polling, stopAfterSource: stopAfterSource, port: &mainQueuePort)
            if !start.mainQueueFirst {
                wait(in: state, until: deadline,
                     polling: start.poll || start.idle || hasRunnableJobs(state) || hasReadySource(state),
                     polled: start.polled)
            }
            if let result = endPass(state, start, polling: polling, deadline: deadline,
                                    stopAfterSource: stopAfterSource, port: &mainQueuePort) {
                return result
            }
        }
    }

    /// What the first half of a pass (``beginPass(_:polling:stopAfterSource:port:)``) leaves
    /// to the wait and the second half.
    struct PassStart {
        /// A manual source fired.
        let handled: Bool
        /// The pass does not sleep: a source fired, the run polls, or the main queue is
        /// serviced first (no `beforeWaiting` / `afterWaiting` then).
        let poll: Bool
        /// CF's fairness: the main queue was found with work before the wait, which is skipped.
        let mainQueueFirst: Bool
        /// The fairness check polled every watch and found the main queue empty.
        let polled: Bool
        /// The mode holds idle sources and no manual source fired: the wait only polls,
        /// with no `beforeWaiting` / `afterWaiting`, and the idle sources fire if it found
        /// nothing (libev's `ev_idle`).
        let idle: Bool
    }

    /// The first half of a pass, up to the wait: wakes heeded, `beforeTimers`,
    /// `beforeSources`, blocks, signalled manual sources (and blocks again), the main
    /// queue's fairness check, `beforeWaiting` unless the pass polls.
    @inline(__always)
    func beginPass(_ state: ModeState, polling: Bool, stopAfterSource: Bool, port: inout MainQueuePort) -> PassStart {
        heedWakeUps()
        stats.passes += 1
        if let metrics { metrics.passes.bump(by: 1) }
        drainInbox()
        notify(.beforeTimers, state)
        notify(.beforeSources, state)
        runBlocks(state)
        let handled = fireManualSources(state, stopAfterSource: stopAfterSource)
        if handled { runBlocks(state) }

        // CF's fairness: a main queue not serviced last pass is read before sleeping.
        let mainQueueCheck = mainQueueBeforeWaiting(&port)
        let mainQueueFirst = mainQueueCheck == .serviceNow
        let poll = handled || polling || mainQueueFirst
        let idle = !handled && !mainQueueFirst && state.hasIdleSources
        if !poll && !idle { notify(.beforeWaiting, state) }
        return PassStart(handled: handled, poll: poll, mainQueueFirst: mainQueueFirst, polled: mainQueueCheck == .polled,
                         idle: idle)
    }

    /// The second half of a pass, after the wait: wakes ignored, `afterWaiting` unless the
    /// pass polled, due timers, the main queue, ready kernel sources, blocks; then the run's
    /// result in CF's order, or nil to go on with another pass.
    @inline(__always)
    func endPass(_ state: ModeState, _ start: PassStart, polling: Bool, deadline: Int64, stopAfterSource: Bool,
                 port: inout MainQueuePort) -> RunResult? {
        // CF's `__CFRunLoopSetIgnoreWakeUps`: the loop is awake and will check its inbox,
        // sources and timers before it sleeps again, so wakes until the next pass are dropped.
        shared.ignoreWakeUps.store(true, ordering: .releasing)
        drainInbox()
        markWake(deadline: start.mainQueueFirst ? nil : backend.expiredDeadline)
        if !start.poll && !start.idle { notify(.afterWaiting, state) }
        if start.idle && nothingArrived(in: state) { fireIdleSources(state) }

        if wallClockWasSet { realignTimers() }
        fireDueTimers(state)
        var handled = start.handled
        if serviceMainQueue(&port, polled: start.mainQueueFirst) { handled = true }
        if fireKernelSources(state, stopAfterSource: stopAfterSource) { handled = true }
        runBlocks(state)

        if handled && stopAfterSource { return .handledSource }
        if polling || backend.hasReached(deadline) { return .timedOut }
        if takeStop() { return .stopped }
        drainInbox()  // a block performed from another thread keeps the mode alive, as in CF
        if isEmpty(state) { return .finished }
        return nil
    }

    /// Whether the poll that stood for an idle pass's wait found nothing to do: no event
    /// collected, no timer of the mode due at the pass's wake (the instant the pass fires its
    /// timers for), no source ready, no job to run.
    /// (`hasDue` first: it looks at the two fronts only, and no timer is due when it says so;
    /// the wake window, which leaves out timers firing further up the stack, decides the rest.)
    private func nothingArrived(in state: ModeState) -> Bool {
        guard !backend.collectedEvents && !hasReadySource(state) && !hasRunnableJobs(state) else { return false }
        let now = (lastWakeInstant ?? backend.now()).nanoseconds
        return !state.timers.hasDue(at: now) || state.timers.wake.first > now
    }

    /// Fires the idle sources of `state` in ascending order (each still valid and in the mode).
    /// The first is in the mode (nothing ran since the list was read); a later one is looked
    /// up, since an earlier callout may have removed it.
    private func fireIdleSources(_ state: ModeState) {
        for (index, source) in state.idleSources.enumerated()
        where source.isValid && (index == 0 || state.contains(source)) {
            fire(source)
        }
    }

    /// Waits until the run's `deadline` or the mode's next timer wake, whichever is first;
    /// a polling pass collects readiness and consumes a pending wake, without sleeping.
    /// `polled`: the main queue's fairness check polled every watch this pass, so a polling
    /// pass is done, and a wait returns at once if that poll collected an event.
    private func wait(in state: ModeState, until deadline: Int64, polling: Bool, polled: Bool) {
        if polled && (polling || backend.collectedEvents) {
            if !polling { stats.wakeups += 1 }
            return
        }
        if polling {
            backend.wait(.poll, events: self)
        } else {
            stats.wakeups += 1
            let wait = planWait(state, until: Instant(nanoseconds: deadline))
            guard trace != nil || metrics != nil else {
                backend.wait(wait, events: self)
                shared.plannedWake.store(.min, ordering: .relaxed)
                return
            }
            let asleepAt = waitNow()
            let latest = wait.latestNanoseconds
            if let trace { traceRecord(trace, .sleep(until: latest == .max ? nil : Instant(nanoseconds: latest)), at: asleepAt) }
            metricsFallAsleep(at: asleepAt.nanoseconds)
            let readyBefore = readySources.count
            backend.wait(wait, events: self)
            shared.plannedWake.store(.min, ordering: .relaxed)
            let wokeAt = waitNow()
            let reason = wakeReason(readyBefore: readyBefore)
            if let trace { traceRecord(trace, .wake(reason), at: wokeAt) }
            metricsWake(at: wokeAt.nanoseconds, asleepAt: asleepAt.nanoseconds, for: reason)
        }
    }

    /// The clock before and after a wait that the trace or the metrics record: a reading
    /// that anchors the callouts' cheaper ones (``Backend/measuringNow(anchor:)``).
    func waitNow() -> Instant { Instant(nanoseconds: backend.measuringNow(anchor: true)) }

    /// Why the wait that just ended ended: its deadline, a source the backend reported ready
    /// (sources reported past `readyBefore`), the main queue, or else a wake-up.
    func wakeReason(readyBefore: Int) -> Trace.WakeReason {
        if backend.expiredDeadline != nil { return .deadline }
        if readySources.count > readyBefore {
            return readySources[readyBefore...].contains { $0.caughtSignal != nil && $0.fileDescriptor == nil } ? .signal : .descriptor
        }
        if mainQueue.isReady { return .mainQueue }
        return .wakeUp
    }

    /// The coming wait, its latest end published in `shared.plannedWake` so that another thread
    /// adding a timer wakes the loop only when the timer must fire before that window ends.
    /// Tasks that arrived after the pass drained its inbox are taken first; the fence pairs
    /// with the one in `enqueue(_:wakingIfSleepingPast:)`.
    func planWait(_ state: ModeState, until deadline: Instant) -> Wait {
        while true {
            drainInbox()
            var timers = state.timers.wake
            timers.latest = min(timers.latest, deadline.nanoseconds)
            let wait: Wait = timers.served < deadline.nanoseconds ? .until(timers)
                : deadline == .distantFuture ? .forever : .until(.at(deadline.nanoseconds))
            shared.plannedWake.store(wait.latestNanoseconds, ordering: .relaxed)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if !shared.inboxPending.load(ordering: .relaxed) { return wait }
        }
    }

    /// CF's `__CFRunLoopUnsetIgnoreWakeUps` at the top of a pass: from here to the end of the
    /// coming wait, a wake ends (or pre-empts) the wait.
    ///
    /// CF makes "check the stop flag at the end of a pass, then heed wakes" atomic with its
    /// loop lock. Here the fence pairs with the one in ``wakeUp()``: a caller whose wake was
    /// dropped made its change visible by now. Blocks, tasks and signalled sources are checked
    /// later in this pass anyway; a stop would only be checked after the wait, so its dropped
    /// wake is sent again now, as if the stop had come just after this point.
    func heedWakeUps() {
        shared.ignoreWakeUps.store(false, ordering: .relaxed)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if shared.stopRequested.load(ordering: .relaxed) { backend.wakeUp() }
    }

    /// Consumes a pending ``stop()``: a plain load first, so a pass without one costs no
    /// read-modify-write. After a shutdown the stop stays, for every run (`stopsEveryRun`).
    func takeStop() -> Bool {
        guard shared.stopRequested.load(ordering: .relaxed) else { return false }
        return shared.stopsEveryRun.load(ordering: .acquiring)
            || shared.stopRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// CF's `__CFRunLoopModeIsEmpty`: no timers, no sources, no block queued for the mode,
    /// and not a mode in which the main loop services libdispatch's main queue.
    func isEmpty(_ state: ModeState) -> Bool {
        state.hasNoTimersOrSources && !blocks.contains { runs($0, in: state) }
            && !servesMainQueue(state.mode) && !hasRunnableJobs(state)
    }

    // MARK: Observers

    /// CF's `__CFRunLoopDoObservers`: the observers of `activity`, on a snapshot, in order,
    /// each skipped if invalidated meanwhile or already firing (a nested run). Inlined up to
    /// the test for a trace or a listener: a pass notifies six times, mostly no one.
    @inline(__always)
    func notify(_ activity: Activity, _ state: ModeState) {
        guard trace != nil || state.observerMask & activity.rawValue != 0 else { return }
        notifyListeners(activity, state)
    }

    private func notifyListeners(_ activity: Activity, _ state: ModeState) {
        // A run's mode is handed to the trace once, at its `entry`.
        if let trace { traceRecord(trace, .event(.activity(activity)), entering: activity == .entry ? state.mode : nil) }
        guard state.observerMask & activity.rawValue != 0 else { return }
        // The snapshot keeps every observer in it alive while its callouts change the mode.
        for observer in state.observers(of: activity) {
            guard observer.isValid, !observer.isFiring else { continue }
            observer.isFiring = true
            stats.observerCallouts += 1
            let mark = beginCallout(.observer(observer.label ?? "observer", activity))
            observer.callout(observer, activity)
            endCallout(mark, .observer(observer.label ?? "observer", activity))
            observer.isFiring = false
            if !observer.repeats { observer.invalidate() }
        }
    }

    // MARK: Blocks

    func runs(_ block: QueuedBlock, in state: ModeState) -> Bool {
        block.modes.contains(state.mode) || (block.modes.contains(.common) && state.isCommon)
    }

    /// CF's `__CFRunLoopDoBlocks`: runs the queued blocks of this mode, in order, then the
    /// executor's jobs (``runJobs(_:)``). Blocks queued meanwhile wait for a later pass;
    /// blocks of other modes stay queued.
    func runBlocks(_ state: ModeState) {
        if !blocks.isEmpty { runQueuedBlocks(state) }
        if !jobs.isEmpty { runJobs(state) }
    }

    /// The blocks of other modes stay in place, at the front of the queue; the queue's buffer
    /// comes back to it afterwards, so running blocks allocates nothing. A nested run in a
    /// block's callout runs the blocks queued since, from an empty queue of its own.
    private func runQueuedBlocks(_ state: ModeState) {
        var queued: [QueuedBlock] = []
        swap(&queued, &blocks)
        // Blocks are used in place, not copied out (a copy retains and releases its three
        // references); the ones kept move forward in order by swaps.
        var kept = 0
        for index in queued.indices {
            guard runs(queued[index], in: state) else {
                queued.swapAt(kept, index)
                kept += 1
                continue
            }
            stats.blocksRun += 1
            let mark = beginCallout(.block(queued[index].label ?? "block"))
            queued[index].body()
            endCallout(mark, .block(queued[index].label ?? "block"))
        }
        queued.removeSubrange(kept...)
        queued.takeAll(from: &blocks)
        blocks = queued
    }
}
