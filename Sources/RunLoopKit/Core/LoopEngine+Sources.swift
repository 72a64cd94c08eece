import RunLoopKitPlatform
import RunLoopKitBackend

/// Sources on the loop's thread: membership, descriptor arming per running mode, and
/// firing (CF's `__CFRunLoopDoSources0`, and the source-1 branch of `__CFRunLoopRun`).
///
/// Adding, removing and changing the interest of a descriptor source cost O(1) backend
/// work: only the mode that runs (`armedState`) has its descriptors watched, and a source
/// entering or leaving it is watched or unwatched alone. Switching the running mode (a nested
/// run of another mode) re-arms the two modes' descriptors. A pass touches only the sources
/// the backend reported ready (`readySources`).
extension LoopEngine: BackendEvents {
    /// The add itself, once ``add(_:forMode:)-(EVSource,_)`` made this loop the source's
    /// own (an invalidate that comes later finds the loop and removes the source).
    /// `failure`: why inotify refused a file source's watch, as the adding thread made it.
    func addOnLoopThread(_ source: EVSource, forMode mode: Mode, failure: Error? = nil) {
        guard source.isValid else {
            // Invalidated since an add from another thread, which registered a file source's
            // watch there, perhaps after the invalidation's removal ran here: let go of it.
            if let watch = source.fileWatch { unregisterFileSource(source, watch) }
            return
        }
        if let failure, let state = states(for: mode).first {
            fail(source, with: failure, in: state)
            return
        }
        if let fd = source.kind.fileDescriptor, source.registryEntry == .unregistered,
           source.descriptorFailure() == nil {
            // From here on the open file itself is checked, not its inode (which the
            // anonymous-inode kinds share). A file the registry cannot take is never watched.
            do throws(Error) {
                source.registryEntry = try EVRunLoop.Error.translating { () throws(SystemCallError) in try watches.identities.register(fd) }
            } catch {
                guard let state = states(for: mode).first else {
                    source.error = error
                    source.invalidate()
                    return
                }
                report(source, failed: error, in: state)
                return
            }
        }
        if let number = source.caughtSignal, source.watchToken < 0 {
            source.watchToken = watches.claim(source)
            backend.watch(.signal(number), token: source.watchToken)
            // A child that exited before SIGCHLD was caught sent its signal to no one: the
            // source checks its child at the first pass of one of its modes.
            if source.watchesChildBySignal { ready(source.watchToken) }
        }
        if mode == .common { commonSources.insert(source) }
        for state in states(for: mode) { insert(source, into: state) }
    }

    func insert(_ source: EVSource, into state: ModeState) {
        // A descriptor found closed as it is armed invalidates the source: later modes skip it.
        guard source.isValid, state.insert(source) else { return }
        source.modes.append(state)
        if let watch = source.fileWatch, let failure = registerFileSource(source, watch) {
            fail(source, with: failure, in: state)
            return
        }
        guard state === armedState, source.isArmable else { return }
        if runStack.last === state {
            arm(source, in: state)
        } else {
            pendingArms.append(source)
        }
    }

    /// ``EVRunLoop/remove(_:forMode:)-(EVSource,_)`` on the loop's thread.
    func remove(_ source: EVSource, forMode mode: Mode) {
        if mode == .common { commonSources.remove(source) }
        for state in states(for: mode) { remove(source, from: state) }
    }

    func remove(_ source: EVSource, from state: ModeState) {
        state.remove(source)
        source.modes.removeAll { $0 === state }
        if state === armedState, source.isArmable { unwatch(source) }
        if source.modes.isEmpty, let watch = source.fileWatch { unregisterFileSource(source, watch) }
    }

    func removeEverywhere(_ source: EVSource) {
        commonSources.remove(source)
        for state in source.modes { state.remove(source) }
        source.modes.removeAll()
        unwatch(source)
        if let watch = source.fileWatch { unregisterFileSource(source, watch) }
        if source.isReady {
            source.isReady = false
            readySources.removeAll { $0 === source }
        }
        if !source.isValid {
            source.fileWatch?.cancelHold()
            source.closeOwnedDescriptor()
        }
    }

    /// Stops the backend's watch of `source`, if it has one.
    private func unwatch(_ source: EVSource) {
        if let watch = source.fileWatch {
            disarmFileSource(watch)
            return
        }
        guard source.watchToken >= 0 else { return }
        backend.unwatch(source.watchToken)
        watches.release(source.watchToken)
        source.watchToken = -1
        if let fd = source.fileDescriptor { watchesPerDescriptor[Int(fd)] -= 1 }
    }

    /// Starts watching the descriptor of `source`, a member of `state` about to run or
    /// running, unless it is watched already or cannot be watched.
    private func arm(_ source: EVSource, in state: ModeState) {
        if let watch = source.fileWatch {
            if source.isValid && !source.isPaused { armFileSource(source, watch, in: state) }
            return
        }
        guard source.watchToken < 0, source.isValid, !source.isPaused, let fd = source.fileDescriptor else { return }
        // libev aborts on a closed descriptor; a reused number would watch a stranger's file.
        if let failure = staleness(of: source) {
            fail(source, with: failure, in: state)
            return
        }
        countWatch(of: fd, in: state)
        source.watchToken = watches.claim(source)
        // A child source's pidfd becomes readable when the child exits.
        let interest = source.kind.fileDescriptor == nil ? .read : source.readiness
        backend.watch(.descriptor(fd, interest: WatchInterest(interest)), token: source.watchToken)
    }

    /// Counts a new watch of the number `fd` (`state`: the mode about to run or running),
    /// failing first the sources whose watch of that number is stale.
    func countWatch(of fd: Int32, in state: ModeState) {
        let index = Int(fd)
        if index >= watchesPerDescriptor.count {
            watchesPerDescriptor.append(contentsOf: repeatElement(0, count: index + 1 - watchesPerDescriptor.count))
        } else if watchesPerDescriptor[index] > 0 {
            failStaleWatches(of: fd, in: state)
        }
        watchesPerDescriptor[index] += 1
    }

    /// Before a second watch of the number `fd`: a watched source whose descriptor was closed
    /// and whose number now names another file (the one being armed) would fire for that
    /// file, since libev serves every watch of a number together. Such a source stops being
    /// watched and fails with the error instead. (A source armed after its number was reused
    /// is caught by its own check, in ``arm(_:in:)``.)
    private func failStaleWatches(of fd: Int32, in state: ModeState) {
        for source in watches.sources where source.fileDescriptor == fd {
            guard let failure = staleness(of: source) else { continue }
            fail(source, with: failure, in: state)
        }
    }

    /// Why the loop must not watch `source`'s descriptor, nor run its callout, now: the
    /// descriptor was closed, or its number names another file than the source's; nil when
    /// it still names the source's file. A descriptor source the loop registered
    /// (``DescriptorRegistry``) costs one `epoll_ctl` call, any kind of file told apart; other
    /// sources, and files epoll refuses, compare `fstat`'s device and inode.
    func staleness(of source: EVSource) -> Error? {
        guard let fd = source.kind.fileDescriptor, case .generation(let generation) = source.registryEntry else {
            return source.descriptorFailure()
        }
        switch watches.identities.check(fd, generation: generation) {
        case .same: return nil
        case .closed: return EVSource.closedError(fd)
        case .reused: return EVSource.reusedError(fd)
        }
    }

    /// Whether `source` may fire now: a descriptor source whose descriptor was closed
    /// (and its number perhaps reused) after the wait reported it ready fails instead, as
    /// in ``arm(_:in:)``: its callout would act on whatever file now has the number.
    private func mayFire(_ source: EVSource, in state: ModeState) -> Bool {
        guard source.kind.fileDescriptor != nil, let failure = staleness(of: source) else { return true }
        fail(source, with: failure, in: state)
        return false
    }

    /// ``EVSource/checksInvalidateBeforeClose``'s check after each wait: every watched
    /// descriptor still names its source's file.
    private func checkWatchedDescriptors() {
        for source in watches.sources where source.kind.fileDescriptor != nil {
            if let failure = staleness(of: source) { reportClosedUnderSource(source, failure) }
        }
    }

    /// Stops the program: `source`'s descriptor was closed while the source was in the loop
    /// (``EVSource/checksInvalidateBeforeClose``).
    private func reportClosedUnderSource(_ source: EVSource, _ failure: Error) -> Never {
        misuse("EVSource \(source.label.map { "'\($0)' " } ?? "")\(failure.call) while the source was in a loop: "
            + "invalidate a descriptor source before closing its descriptor (EVSource.checksInvalidateBeforeClose)")
    }

    /// Watches exactly the descriptors of the mode about to run: a descriptor that becomes
    /// ready while another mode runs is noticed when its mode runs again. The same mode
    /// again costs only the sources added to it since (`pendingArms`).
    func armDescriptors(for state: ModeState) {
        guard backend.watchesKernelEvents else { return }
        adoptInotifyIfForked()
        if state === armedState {
            guard !pendingArms.isEmpty else { return }
            let pending = pendingArms
            pendingArms = []
            for source in pending where state.contains(source) { arm(source, in: state) }
            return
        }
        if let previous = armedState {
            for source in previous.unorderedKernelSources
            where source.isArmable && !state.contains(source) {
                unwatch(source)
            }
        }
        armedState = state
        pendingArms = []
        for source in Array(state.unorderedKernelSources) where source.isArmable {
            arm(source, in: state)
        }
    }

    /// Stops watching a descriptor source's descriptor while it stays in its modes, until
    /// ``unpause(_:)``: an async sequence's source, between an element and the next request
    /// (readiness is level-triggered; the consumer reads in between).
    func pause(_ source: EVSource) {
        source.isPaused = true
        unwatch(source)
    }

    /// Watches a paused source's descriptor again, if a mode holding it is the armed one.
    func unpause(_ source: EVSource) {
        guard source.isPaused else { return }
        source.isPaused = false
        guard let state = armedState, state.contains(source) else { return }
        if runStack.last === state {
            arm(source, in: state)
        } else {
            pendingArms.append(source)
        }
    }

    /// Applies a descriptor source's new ``EVSource/readiness`` to its watch, if it has one.
    func updateInterest(of source: EVSource) {
        guard source.watchToken >= 0 else { return }
        backend.setInterest(WatchInterest(source.readiness), token: source.watchToken)
    }

    /// CF's `__CFRunLoopDoSources0`: collects the signalled manual sources of `state` first,
    /// sorts them by `order` then signal time, and fires each that is still signalled and
    /// valid; with `stopAfterSource`, only the first. A source signalled by a handler here
    /// fires in the next pass. Returns whether any fired.
    func fireManualSources(_ state: ModeState, stopAfterSource: Bool) -> Bool {
        guard state.hasManualSources, state.manualSources.contains(where: \.isSignalled) else { return false }
        // `manualSources` is sorted by order already; keys are (order, signal time).
        let signalled = state.manualSources.compactMap { source -> (EVSource, UInt64)? in
            let time = source.signalledAt
            return time != 0 && source.isValid ? (source, time) : nil
        }.sorted { a, b in a.0.order != b.0.order ? a.0.order < b.0.order : a.1 < b.1 }
        var handled = false
        for (source, _) in signalled where source.takeSignal() && source.isValid {
            fire(source)
            handled = true
            if stopAfterSource { break }
        }
        return handled
    }

    /// Fires the descriptor, signal and child sources of `state` that became ready during the
    /// wait, in the order they were added to `state`; with `stopAfterSource`, only the first.
    /// Ready sources of other modes stay ready until one of their modes runs. A child source
    /// fires only once its child exited (and was reaped: ``EVSource/takeChildExit()``).
    func fireKernelSources(_ state: ModeState, stopAfterSource: Bool) -> Bool {
        if EVSource.checksInvalidateBeforeClose { checkWatchedDescriptors() }
        guard !readySources.isEmpty else { return false }
        if readySources.count == 1 { return fireOnlyReadySource(state) }
        var due: [(source: EVSource, sequence: UInt64)] = []
        readySources.removeAll { source in
            guard source.isValid else {
                source.isReady = false
                return true
            }
            guard let sequence = state.kernelSequence(of: source) else { return false }
            due.append((source, sequence))
            return false
        }
        if due.count > 1 { due.sort { $0.sequence < $1.sequence } }
        var handled = false
        var taken = false
        for (source, _) in due where source.isReady && source.isValid {
            source.isReady = false
            taken = true
            // A descriptor closed since the wait, or a SIGCHLD for another child: no callout.
            guard mayFire(source, in: state), source.takeChildExit() else { continue }
            fire(source)
            handled = true
            if stopAfterSource { break }
        }
        // One sweep for the sources taken (a nested run may have fired or re-reported some).
        if taken { readySources.removeAll { !$0.isReady } }
        return handled
    }

    /// ``fireKernelSources(_:stopAfterSource:)`` for one ready source (a pass's usual case),
    /// with no list to sort: the source leaves the ready list before its handler runs, so
    /// that a nested run that reports it again adds it again.
    ///
    /// The source's own list of modes answers whether it is in `state` (a mode or two, where
    /// the mode's table would hash it), and the list is emptied by `removeLast` (a
    /// `removeAll(keepingCapacity:)` goes through `replaceSubrange`: PROFILING.md, "Descriptor
    /// sources at scale").
    private func fireOnlyReadySource(_ state: ModeState) -> Bool {
        let source = readySources.removeLast()  // the list's reference, taken over
        guard source.isValid else {
            source.isReady = false
            return false
        }
        guard source.modes.contains(where: { $0 === state }) else {  // another mode's: stays ready
            readySources.append(source)
            return false
        }
        source.isReady = false
        // A descriptor closed since the wait, or a SIGCHLD for another child: no callout.
        guard mayFire(source, in: state), source.takeChildExit() else { return false }
        fire(source)
        return true
    }

    /// Whether a source of `state` was reported ready and has not fired: a signal or child
    /// exit that came while another mode ran (or a child source's first check), or a source
    /// left by `stopAfterSource`. The coming wait then only polls, as CF's wait returns at
    /// once for a message queued on a port of the mode.
    func hasReadySource(_ state: ModeState) -> Bool {
        guard !readySources.isEmpty else { return false }
        return readySources.contains { $0.isReady && $0.isValid && $0.modes.contains { $0 === state } }
    }

    func fire(_ source: EVSource) {
        if let watch = source.fileWatch, source.error == nil {
            fireFileSource(source, watch)
            return
        }
        stats.sourceFires += 1
        let mark = beginCallout(.source(source.label ?? "source"))
        source.handler(source)
        endCallout(mark, .source(source.label ?? "source"))
    }

    /// A file source that recorded changes it waits for (the loop's inotify instance was
    /// read), or whose tolerance's hold ended: its handler runs when they are due
    /// (``FileWatch``); a watch that ended (its directory went away) invalidates the source,
    /// after reporting it if the source waits for that.
    private func fireFileSource(_ source: EVSource, _ watch: FileWatch) {
        let delivering = watch.takeDelivery { [unowned self] tolerance in
            let hold = EVTimer(interval: .nanoseconds(tolerance), repeats: false,
                               label: "\(source.label ?? "source") tolerance") { [weak source] _ in
                guard let source, let watch = source.fileWatch else { return }
                watch.endHold()
                source.loop?.engine.markReady(source)
            }
            for state in source.modes { loop.add(hold, forMode: state.mode) }
            return hold
        }
        guard delivering else {
            if watch.ended { source.invalidate() }  // its directory went, with no change it waits for
            return
        }
        stats.sourceFires += 1
        let mark = beginCallout(.source(source.label ?? "source"))
        source.handler(source)
        endCallout(mark, .source(source.label ?? "source"))
        if watch.ended { source.invalidate() }
    }

    /// Marks `source` ready as if its watch had reported it: it fires in this pass's
    /// sources if a mode holding it runs, else when one does.
    func markReady(_ source: EVSource) {
        guard source.isValid, !source.isReady else { return }
        source.isReady = true
        readySources.append(source)
    }

    /// A descriptor that cannot be watched: the source is invalidated with `error`, and its
    /// handler is called once, in this mode's next blocks phase (before the loop sleeps).
    func fail(_ source: EVSource, with error: Error, in state: ModeState) {
        if EVSource.checksInvalidateBeforeClose && source.kind.fileDescriptor != nil {
            reportClosedUnderSource(source, error)
        }
        source.disownDescriptor()
        report(source, failed: error, in: state)
    }

    /// Invalidates `source` with `error`, its handler called once in this mode's next blocks
    /// phase.
    private func report(_ source: EVSource, failed error: Error, in state: ModeState) {
        source.error = error
        source.invalidate()
        blocks.append(QueuedBlock(modes: [state.mode], label: nil) { [weak loop] in loop?.engine.fire(source) })
    }

    // MARK: BackendEvents

    func ready(_ token: Int) {
        if token == mainQueue.token {
            mainQueue.isReady = true
        } else if let source = watches[token], !source.isReady {
            source.isReady = true
            readySources.append(source)
        } else if token == inotifyToken {
            drainInotify()
        }
    }
    func wallClockChanged() { wallClockWasSet = true }
    func forked() { adoptInotifyIfForked() }
}

extension EVSource {
    /// Whether the loop watches a descriptor for the source while a mode holding it runs: its
    /// own (a descriptor source, a child source's pidfd), or the loop's inotify instance (a
    /// file source).
    fileprivate var isArmable: Bool { fileWatch != nil || fileDescriptor != nil }
}
