/// Sources on the loop's thread: membership, descriptor arming per running mode, and
/// firing (CF's `__CFRunLoopDoSources0`, and the source-1 branch of `__CFRunLoopRun`).
extension EVRunLoop: BackendEvents {
    /// The add itself, once ``add(_:forMode:)-(EVSource,_)`` made this loop the source's
    /// own (an invalidate that comes later finds the loop and removes the source).
    func addOnLoopThread(_ source: EVSource, forMode mode: Mode) {
        guard source.isValid else { return }
        let token = ObjectIdentifier(source)
        if case .signal(let number) = source.kind, watchedSources[token] == nil {
            watchedSources[token] = source
            backend.watch(signal: number, token: token)
        }
        if mode == .common { commonSources.insert(source) }
        for state in states(for: mode) { insert(source, into: state) }
        if let running = runStack.last { armDescriptors(for: running) }
    }

    func insert(_ source: EVSource, into state: ModeState) {
        guard !state.contains(source) else { return }
        state.insert(source)
        source.modes.append(state)
    }

    func remove(_ source: EVSource, from state: ModeState) {
        state.remove(source)
        source.modes.removeAll { $0 === state }
    }

    func removeEverywhere(_ source: EVSource) {
        commonSources.remove(source)
        for state in source.modes { state.remove(source) }
        source.modes.removeAll()
        let token = ObjectIdentifier(source)
        if case .signal = source.kind, watchedSources[token] != nil { backend.unwatch(signal: token) }
        if armedDescriptors.remove(token) != nil { backend.unwatch(fd: token) }
        watchedSources[token] = nil
        if !source.isValid { source.closeOwnedDescriptor() }
    }

    /// Watches exactly the descriptors of the mode about to run: a descriptor that becomes
    /// ready while another mode runs is noticed when its mode runs again.
    func armDescriptors(for state: ModeState) {
        guard backend.watchesKernelEvents, !(state.kernelSources.isEmpty && armedDescriptors.isEmpty) else { return }
        var wanted: Set<ObjectIdentifier> = []
        for source in state.kernelSources {
            switch source.kind {
            case .readable(let fd), .writable(let fd):
                let token = ObjectIdentifier(source)
                if !armedDescriptors.contains(token) {
                    // libev aborts on a closed descriptor; a reused number would watch a
                    // stranger's file.
                    if let failure = source.descriptorFailure() {
                        fail(source, with: failure, in: state)
                        continue
                    }
                    if case .writable = source.kind {
                        backend.watch(fd: fd, writing: true, token: token)
                    } else {
                        backend.watch(fd: fd, writing: false, token: token)
                    }
                    watchedSources[token] = source
                }
                wanted.insert(token)
            case .manual, .signal:
                continue
            }
        }
        for token in armedDescriptors.subtracting(wanted) {
            backend.unwatch(fd: token)
            watchedSources[token] = nil
        }
        armedDescriptors = wanted
    }

    /// CF's `__CFRunLoopDoSources0`: collects the signalled manual sources of `state` first,
    /// sorts them by `order` then signal time, and fires each that is still signalled and
    /// valid; with `stopAfterSource`, only the first. A source signalled by a handler here
    /// fires in the next pass. Returns whether any fired.
    func fireManualSources(_ state: ModeState, stopAfterSource: Bool) -> Bool {
        guard state.manualSources.contains(where: \.isSignalled) else { return false }
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

    /// Fires the descriptor and signal sources of `state` that became ready during the wait.
    func fireKernelSources(_ state: ModeState, stopAfterSource: Bool) -> Bool {
        guard !state.kernelSources.isEmpty else { return false }
        var handled = false
        for source in state.kernelSources where source.isReady && source.isValid {
            source.isReady = false
            fire(source)
            handled = true
            if stopAfterSource { break }
        }
        return handled
    }

    private func fire(_ source: EVSource) {
        stats.sourceFires += 1
        trace?.record(.source(source.label ?? "source"))
        source.handler(source)
    }

    /// A descriptor that cannot be watched: the source is invalidated with `error`, and its
    /// handler is called once, in this mode's next blocks phase (before the loop sleeps).
    private func fail(_ source: EVSource, with error: Error, in state: ModeState) {
        source.error = error
        source.disownDescriptor()
        source.invalidate()
        blocks.append(QueuedBlock(modes: [state.mode], label: nil) { [weak self] in self?.fire(source) })
    }

    // MARK: BackendEvents

    func descriptorReady(_ token: ObjectIdentifier) {
        if token == Self.mainQueueToken { mainQueue.isReady = true }
        watchedSources[token]?.isReady = true
    }
    func signalArrived(_ token: ObjectIdentifier) { watchedSources[token]?.isReady = true }
    func wallClockChanged() { wallClockWasSet = true }

    // MARK: Public API

    /// Adds `source` to `mode` (or to every common mode, for ``Mode/common``). A signal
    /// source starts catching its signal now. Safe from any thread.
    ///
    /// - Precondition: the source is valid, not added to another loop, and — for descriptor
    ///   and signal sources — the loop is not on an ``EVVirtualClock``.
    ///
    /// - Parameters:
    ///   - source: the source; it serves this loop only from now on.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopAddSource`.
    public func add(_ source: EVSource, forMode mode: Mode) {
        require(source.isManual || backend.watchesKernelEvents,
                "EVRunLoop.add(_:forMode:): \(source.kind) sources need the real loop, not an EVVirtualClock loop")
        switch source.link.claim(for: self) {
        case .claimed: break
        case .invalidated: misuse("EVRunLoop.add(_:forMode:): source \(source.label ?? "") is invalidated")
        case .otherLoop: misuse("EVRunLoop.add(_:forMode:): source \(source.label ?? "") belongs to another loop")
        }
        if isOwnerThread {
            addOnLoopThread(source, forMode: mode)
        } else {
            enqueue { self.addOnLoopThread(source, forMode: mode) }
        }
    }

    /// Removes `source` from `mode` (or every common mode) without invalidating it. Safe
    /// from any thread.
    ///
    /// - Parameters:
    ///   - source: the source.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRemoveSource`.
    public func remove(_ source: EVSource, forMode mode: Mode) {
        guard isOwnerThread else {
            enqueue { self.remove(source, forMode: mode) }
            return
        }
        if mode == .common { commonSources.remove(source) }
        for state in states(for: mode) { remove(source, from: state) }
        if let running = runStack.last { armDescriptors(for: running) }
    }

    /// Whether `source` is in `mode` (for ``Mode/common``: whether it was added to it).
    /// Loop thread only.
    ///
    /// - Parameters:
    ///   - source: the source.
    ///   - mode: the mode, or ``Mode/common``.
    /// - Returns: whether the source is in the mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopContainsSource`.
    public func contains(_ source: EVSource, inMode mode: Mode) -> Bool {
        checkOwner("contains(_:inMode:)")
        if mode == .common { return commonSources.contains(source) }
        return source.modes.contains { $0.mode == mode }
    }
}
