/// The run itself: CFRunLoop's `CFRunLoopRunSpecific` and `__CFRunLoopRun`, step for step.
extension EVRunLoop {
    /// `CFRunLoopRunSpecific`: the empty-mode check, `entry`, the passes, `exit`.
    func runSpecific(mode: Mode, timeout seconds: Double, stopAfterSource: Bool, call: String) -> RunResult {
        precondition(mode != .common, "EVRunLoop.\(call): .common is not a mode that can run; run a concrete mode")
        drainInbox()
        guard let state = modes[mode], !isEmpty(state) else {
            trace?.record(.returned(.finished))
            return .finished
        }
        let thread = ThreadLoops.current
        thread.running.append(.passUnretained(self))
        runStack.append(state)
        armDescriptors(for: state)
        // CF's per-run data: each run starts unstopped; the enclosing run's flag comes back
        // when this one returns (`__CFRunLoopPushPerRunData` / `PopPerRunData`).
        let enclosingStop = takeStop()
        activeRuns.add(1, ordering: .releasing)
        defer {
            activeRuns.subtract(1, ordering: .releasing)
            if enclosingStop || stopRequested.load(ordering: .relaxed) {
                stopRequested.store(enclosingStop, ordering: .releasing)
            }
            runStack.removeLast()
            thread.running.removeLast()
            if let outer = runStack.last { armDescriptors(for: outer) }
        }

        markWake()
        notify(.entry, state)
        let result = passes(state, timeout: seconds, stopAfterSource: stopAfterSource)
        notify(.exit, state)
        trace?.record(.returned(result))
        return result
    }

    /// `__CFRunLoopRun`: pass after pass until a result.
    private func passes(_ state: ModeState, timeout seconds: Double, stopAfterSource: Bool) -> RunResult {
        // A stop() from an `entry` observer.
        if takeStop() { return .stopped }

        let polling = !(seconds > 0)  // CF: a timeout at or below zero polls once
        let deadline: Int64 =
            polling ? backend.now().nanoseconds
            : seconds >= 9e9 ? .max  // beyond ~285 years: no deadline (CF's TIMER_INTERVAL_LIMIT)
            : (backend.now() + .seconds(exactly: seconds)).nanoseconds
        var mainQueuePort = mainQueuePort(for: state.mode)  // CF's dispatchPort

        while true {
            stats.passes += 1
            drainInbox()
            notify(.beforeTimers, state)
            notify(.beforeSources, state)
            runBlocks(state)
            var handled = fireManualSources(state, stopAfterSource: stopAfterSource)
            if handled { runBlocks(state) }

            // CF's fairness: a main queue not serviced last pass is read before sleeping.
            let mainQueueFirst = mainQueueBeforeWaiting(&mainQueuePort)
            let poll = handled || polling || mainQueueFirst
            if !poll { notify(.beforeWaiting, state) }
            if !mainQueueFirst { wait(in: state, until: deadline, polling: poll || hasRunnableJobs(state)) }
            markWake()
            if !poll { notify(.afterWaiting, state) }

            if wallClockWasSet { realignTimers() }
            fireDueTimers(state)
            if serviceMainQueue(&mainQueuePort, polled: mainQueueFirst) { handled = true }
            if fireKernelSources(state, stopAfterSource: stopAfterSource) { handled = true }
            runBlocks(state)

            if handled && stopAfterSource { return .handledSource }
            if polling || deadline <= backend.now().nanoseconds { return .timedOut }
            if takeStop() { return .stopped }
            if isEmpty(state) { return .finished }
        }
    }

    /// Waits until the run's `deadline` or the mode's next timer wake, whichever is first;
    /// a polling pass only collects readiness, without sleeping.
    private func wait(in state: ModeState, until deadline: Int64, polling: Bool) {
        if polling {
            backend.wait(in: .at(.min), events: self)
        } else {
            stats.wakeups += 1
            var timers = state.timers.wake
            timers.latest = min(timers.latest, deadline)
            backend.wait(in: timers.served < deadline ? timers : .at(deadline), events: self)
        }
        drainInbox()
    }

    /// Consumes a pending ``stop()``: a plain load first, so a pass without one costs no
    /// read-modify-write.
    private func takeStop() -> Bool {
        stopRequested.load(ordering: .relaxed) && stopRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// CF's `__CFRunLoopModeIsEmpty`: no timers, no sources, no block queued for the mode,
    /// and not a mode in which the main loop services libdispatch's main queue.
    func isEmpty(_ state: ModeState) -> Bool {
        state.hasNoTimersOrSources && !blocks.contains { runs($0, in: state.mode) }
            && !servesMainQueue(state.mode) && !hasRunnableJobs(state)
    }

    // MARK: Observers

    /// CF's `__CFRunLoopDoObservers`: the observers of `activity`, on a snapshot, in order,
    /// each skipped if invalidated meanwhile or already firing (a nested run).
    func notify(_ activity: Activity, _ state: ModeState) {
        trace?.record(.activity(activity))
        guard state.observerMask & activity.rawValue != 0 else { return }
        for observer in state.observers where observer.activities.contains(activity) {
            guard observer.isValid, !observer.isFiring else { continue }
            observer.isFiring = true
            stats.observerCallouts += 1
            trace?.record(.observer(observer.label ?? "observer", activity))
            observer.callout(observer, activity)
            observer.isFiring = false
            if !observer.repeats { observer.invalidate() }
        }
    }

    // MARK: Blocks

    func runs(_ block: QueuedBlock, in mode: Mode) -> Bool {
        block.modes.contains(mode) || (block.modes.contains(.common) && commonModeSet.contains(mode))
    }

    /// CF's `__CFRunLoopDoBlocks`: runs the queued blocks of this mode, in order, then the
    /// executor's jobs (``runJobs(_:)``). Blocks queued meanwhile wait for a later pass;
    /// blocks of other modes stay queued.
    func runBlocks(_ state: ModeState) {
        if !blocks.isEmpty { runQueuedBlocks(state) }
        if !jobs.isEmpty { runJobs(state) }
    }

    private func runQueuedBlocks(_ state: ModeState) {
        let queued = blocks
        blocks = []
        var kept: [QueuedBlock] = []
        for block in queued {
            guard runs(block, in: state.mode) else {
                kept.append(block)
                continue
            }
            stats.blocksRun += 1
            trace?.record(.block(block.label ?? "block"))
            block.body()
        }
        blocks = kept + blocks
    }
}
