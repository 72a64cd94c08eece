import RunLoopKitPlatform
import RunLoopKitBackend

/// A run whose waits another loop does: the pass of `LoopEngine+Pass.swift` cut at its wait.
///
/// ``EVRunLoop/preparePolledPass(mode:until:returnAfterSourceHandled:)`` opens the run (`entry`) if none is open, runs
/// the first half of a pass if it has not run yet (``beginPass(_:polling:stopAfterSource:port:)``:
/// up to `beforeWaiting`), and plans the wait as a run would, arming the backend's descriptor
/// for its deadline instead of sleeping. The other loop polls the descriptor; then
/// ``EVRunLoop/dispatchPolledPass()`` collects what woke it and runs the second half
/// (``endPass(_:_:polling:deadline:stopAfterSource:port:)``: `afterWaiting` to the run's
/// result). A run that ends notifies `exit`, and the next prepare opens a new one, as a
/// caller of `run(mode:until:)` in a loop would. So every callout of a polled loop comes in
/// the order a run gives it.
///
/// sd-event splits its iteration the same way (`sd_event_prepare`, `sd_event_wait`,
/// `sd_event_dispatch`), as GLib does (`g_main_context_prepare`, `query`, `check`, `dispatch`).
extension LoopEngine {
    /// What a polled run keeps between the calls of the loop that drives it.
    struct PolledRun {
        let state: ModeState
        /// The run's deadline (ns; `.max` for none).
        let deadline: Int64
        /// Whether the run ends after a pass in which a source fired.
        let stopAfterSource: Bool
        let frame: RunFrame
        var port: MainQueuePort
        /// The first half of the current pass, once it ran; nil between passes.
        var start: PassStart?
        /// How the coming dispatch ends the wait, as the last prepare planned it.
        var plan = WaitPlan.foreign
    }

    /// How the wait of a polled pass ends.
    enum WaitPlan {
        /// No wait: the main queue goes first, or the fairness check's poll was the wait.
        case none
        /// A poll: the pass must not sleep (a source fired, work is queued).
        case poll
        /// The other loop's poll of the descriptor, finished by the backend.
        case foreign
    }

    /// ``EVRunLoop/preparePolledPass(mode:until:returnAfterSourceHandled:)`` on the loop's thread.
    func preparePolledPass(mode: Mode, until deadline: Instant, stopAfterSource: Bool, call: String) -> EVRunLoop.PollDeadline {
        require(!isInPolledCall, "EVRunLoop.\(call) called from a callout of a polled pass; call it from the loop that drives this one")
        isInPolledCall = true
        defer { isInPolledCall = false }
        if let run = polledRun {
            require(run.state.mode == mode,
                    "EVRunLoop.\(call): a polled run of mode \(run.state.mode.rawValue) is open; end it with endPolledRun() before polling \(mode.rawValue)")
        } else {
            require(runStack.isEmpty,
                    "EVRunLoop.\(call) called inside a run of the loop; a loop driven by another loop polls only outside its own runs")
            require(mode != .common, "EVRunLoop.\(call): .common is not a mode that can run; poll a concrete mode")
            guard openPolledRun(mode: mode, until: deadline, stopAfterSource: stopAfterSource) else {
                return backend.collectedEvents ? .now : .never
            }
            if polledRun == nil { return .now }  // stopped by an `entry` observer: the dispatch says so
        }
        return planPolledWait()
    }

    /// Opens a polled run of `mode` (`entry`); false when the mode is empty, in which case the
    /// loop heeds wakes until the next prepare, so that another thread's add or perform makes
    /// the descriptor readable.
    private func openPolledRun(mode: Mode, until deadline: Instant, stopAfterSource: Bool) -> Bool {
        drainInbox()
        if let state = modes[mode], !isEmpty(state) {
            return openPolledRun(state, until: deadline, stopAfterSource: stopAfterSource)
        }
        // Idle: wakes are heeded, and the descriptor is readied for a wait with no deadline
        // (a wake sent before this is collected), then the inbox is read once more for what
        // came before the wakes were heeded.
        heedWakeUps()
        shared.plannedWake.store(.max, ordering: .relaxed)
        _ = backend.prepareForeignWait(.forever, events: self)
        drainInbox()
        guard let state = modes[mode], !isEmpty(state) else { return false }
        shared.plannedWake.store(.min, ordering: .relaxed)
        return openPolledRun(state, until: deadline, stopAfterSource: stopAfterSource)
    }

    private func openPolledRun(_ state: ModeState, until deadline: Instant, stopAfterSource: Bool) -> Bool {
        let frame = enterRun(state)
        polledRun = PolledRun(state: state, deadline: deadline.nanoseconds, stopAfterSource: stopAfterSource, frame: frame,
                              port: mainQueuePort(for: state.mode))
        notify(.entry, state)
        if takeStop() { closePolledRun(.stopped) }  // a stop() from an `entry` observer
        return true
    }

    /// Runs the first half of the pass if it has not run, then plans its wait: `.now` when
    /// the pass must not sleep or something is ready already, else the deadline the
    /// backend's descriptor is armed for.
    private func planPolledWait() -> EVRunLoop.PollDeadline {
        guard var run = polledRun else { return .now }
        let state = run.state
        let start: PassStart
        if let begun = run.start {
            start = begun
            drainInbox()
        } else {
            start = beginPass(state, polling: false, stopAfterSource: run.stopAfterSource, port: &run.port)
            run.start = start
        }
        defer { polledRun = run }
        if start.mainQueueFirst {
            run.plan = .none
            return .now
        }
        // A block the driving loop's code performed on this thread while the pass waited
        // needs no kernel event: the pass runs it without sleeping. (Blocks queued by the
        // pass's own callouts wait, as in a run: CF does not wake for them.)
        let outsideBlock = blockQueuedWhilePolled && blocks.contains { runs($0, in: state) }
        let polling = start.poll || start.idle || hasRunnableJobs(state) || hasReadySource(state) || outsideBlock
        if start.polled && (polling || backend.collectedEvents) {
            run.plan = .none
            return .now
        }
        if polling {
            run.plan = .poll
            return .now
        }
        run.plan = .foreign
        if metrics != nil, polledAsleepAt == nil {
            let asleepAt = waitNow().nanoseconds
            metricsFallAsleep(at: asleepAt)
            polledAsleepAt = asleepAt
        }
        let target = Instant(nanoseconds: backend.prepareForeignWait(planWait(state, until: Instant(nanoseconds: run.deadline)), events: self))
        if backend.collectedEvents || backend.foreignDeadlinePassed { return .now }
        return target == .distantFuture ? .never : .at(target)
    }

    /// ``EVRunLoop/dispatchPolledPass()`` on the loop's thread.
    func dispatchPolledPass(call: String) -> RunResult? {
        require(!isInPolledCall, "EVRunLoop.\(call) called from a callout of a polled pass; call it from the loop that drives this one")
        isInPolledCall = true
        defer { isInPolledCall = false }
        guard var run = polledRun else {
            if let ended = endedPolledRun {
                endedPolledRun = nil
                return ended
            }
            // No run open (its mode was empty): take the wake that made the descriptor
            // readable; the next prepare opens the run if the mode has work now.
            backend.finishForeignWait(events: self)
            shared.plannedWake.store(.min, ordering: .relaxed)
            return nil
        }
        guard let start = run.start else { return nil }  // no prepare since the last pass
        switch run.plan {
        case .none:
            break
        case .poll:
            backend.wait(.poll, events: self)
        case .foreign:
            stats.wakeups += 1
            let readyBefore = readySources.count
            backend.finishForeignWait(events: self)
            shared.plannedWake.store(.min, ordering: .relaxed)
            if let asleepAt = polledAsleepAt {
                polledAsleepAt = nil
                metricsWake(at: waitNow().nanoseconds, asleepAt: asleepAt, for: wakeReason(readyBefore: readyBefore))
            }
        }
        run.start = nil
        blockQueuedWhilePolled = false
        let result = endPass(run.state, start, polling: false, deadline: run.deadline, stopAfterSource: run.stopAfterSource,
                             port: &run.port)
        polledRun = run
        guard let result else { return nil }
        closePolledRun(result)
        endedPolledRun = nil
        return result
    }

    /// ``EVRunLoop/endPolledRun()`` on the loop's thread: `exit`, if a polled run is open.
    func endPolledRun(call: String) {
        require(!isInPolledCall, "EVRunLoop.\(call) called from a callout of a polled pass; call it from the loop that drives this one")
        endedPolledRun = nil
        // The wait prepared last is over: wakes stop going to the descriptor.
        if backend.pollDescriptor != nil { backend.finishForeignWait(events: self) }
        shared.plannedWake.store(.min, ordering: .relaxed)
        guard polledRun != nil else {
            shared.ignoreWakeUps.store(true, ordering: .releasing)  // between runs again
            return
        }
        isInPolledCall = true
        defer { isInPolledCall = false }
        closePolledRun(nil)
        endedPolledRun = nil
    }

    /// `exit`, and the run's frame left; `result` is kept for the dispatch that reports it.
    private func closePolledRun(_ result: RunResult?) {
        guard let run = polledRun else { return }
        polledAsleepAt = nil
        notify(.exit, run.state)
        if let result { traceEvent(.returned(result)) }
        polledRun = nil
        leaveRun(run.frame)
        shared.ignoreWakeUps.store(true, ordering: .releasing)  // between runs, as after any outermost run
        endedPolledRun = result
    }
}
