import RunLoopKitPlatform

extension EVRunLoop {
    /// Adds `source` to `mode` (or to every common mode, for ``Mode/common``). A signal
    /// source starts catching its signal now (a child source on a kernel without pidfds,
    /// `SIGCHLD`). Safe from any thread.
    ///
    /// - Precondition: the source is valid, not added to another loop, and — for descriptor,
    ///   signal and child sources — the loop is not on an ``EVVirtualClock``.
    ///
    /// - Parameters:
    ///   - source: the source; it serves this loop only from now on.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopAddSource`.
    public func add(_ source: EVSource, forMode mode: Mode) {
        require(source.isManual || source.isIdle || backend.watchesKernelEvents,
                "EVRunLoop.add(_:forMode:): \(source.kind) sources need the real loop, not an EVVirtualClock loop")
        if let fd = source.kind.fileDescriptor, backend.isPollDescriptor(fd) {
            // epoll refuses to hold itself, and libev aborts when epoll refuses a descriptor.
            misuse("EVRunLoop.add(_:forMode:): source \(source.label.map { "'\($0)' " } ?? "")watches this loop's own "
                + "pollDescriptor (\(fd)), which is readable when the loop has work: a loop cannot wait on itself. "
                + "Hand pollDescriptor to the loop that drives this one (another loop's descriptor source, GLib, "
                + "poll) and run this loop's passes from there (preparePolledPass, dispatchPolledPass)")
        }
        let onLoopThread = isOwnerThread
        switch source.link.claim(for: .passUnretained(shared)) {
        case .claimed: break
        case .invalidated: misuse("EVRunLoop.add(_:forMode:): source \(source.label ?? "") is invalidated")
        case .otherLoop: misuse("EVRunLoop.add(_:forMode:): source \(source.label ?? "") belongs to another loop")
        }
        if onLoopThread {
            engine.addOnLoopThread(source, forMode: mode)
        } else if let watch = source.fileWatch {
            // A file's watch starts now: the changes made after the add are the source's.
#if DEBUG
            shared.seam(\.addBeforeFileRegister)
#endif
            let failure = engine.inotify.register(source, watch)
            enqueue { $0.addOnLoopThread(source, forMode: mode, failure: failure) }
        } else {
            enqueue { $0.addOnLoopThread(source, forMode: mode) }
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
        if isOwnerThread {
            engine.remove(source, forMode: mode)
        } else {
            enqueue { $0.remove(source, forMode: mode) }
        }
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
        if mode == .common { return engine.commonSources.contains(source) }
        return source.modes.contains { $0.mode == mode }
    }
}

extension EVRunLoop {
    /// Stops the program with a message when a signal that a signal source watches, in any
    /// loop, was taken from RunLoopKit's handler (`SignalClaims.verify(_:in:)`): for
    /// RunLoopKitServiceLifecycle's service, which checks when its group has trapped its
    /// signals.
    ///
    /// - Parameter call: the call to name in the message.
    package static func verifySignalSources(in call: String) {
        SignalClaims.verifyAll(in: call)
    }
}
