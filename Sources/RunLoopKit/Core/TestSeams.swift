#if DEBUG
import Synchronization

/// Points where a race's window opens, for tests to hold it open and hit it every time:
/// each hook, when set, is called at the one place its name says. Debug builds only (the
/// tests' builds); a release build has no seam and pays nothing.
struct TestSeams {
    /// In ``LoopEngine/leaveRun(_:)``, between its read of the shutdown's flag
    /// (`stopsEveryRun`) and its store of the stop request. Loop thread.
    var leaveRunBeforeStopStore: (@Sendable () -> Void)?
    /// In ``EVRunLoop/add(_:forMode:)-(EVSource,_)`` called off the loop's thread, after a
    /// file source became the loop's and before its watch is registered. Adding thread.
    var addBeforeFileRegister: (@Sendable () -> Void)?
    /// In ``EVRunLoop/perform(inModes:label:_:)`` called off the loop's thread, at the end of
    /// its hold of the inbox's lock (the block appended, the inbox marked pending). Pushing
    /// thread.
    var performBeforeInboxUnlock: (@Sendable () -> Void)?
    /// In ``LoopShared/loop`` (a timer's or source's way to its loop), while it holds the
    /// facade's lock. Reading thread.
    var loopReadHoldingFacade: (@Sendable () -> Void)?
    /// In ``EVRunLoop/shutdown()`` and ``EVRunLoop/syncShutdown()``, while they hold the
    /// loop's ``EVRunLoop/hostThread`` lock. Shutting-down thread.
    var shutdownHoldingHostThread: (@Sendable () -> Void)?
    /// In `LoopThreadHost.shutDown`, while it holds the host's state lock. Shutting-down thread.
    var shutdownHoldingState: (@Sendable () -> Void)?
    /// In `LoopThreadHost.join`, the state joining, before the join. Joining thread.
    var shutdownBeforeJoin: (@Sendable () -> Void)?
}

extension LoopShared {
    /// Calls the hook at `seam`, if a test set one (outside the lock: a hook may set hooks).
    func seam(_ seam: KeyPath<TestSeams, (@Sendable () -> Void)?>) {
        if let hook = seams.withLock({ $0[keyPath: seam] }) { hook() }
    }
}
#endif
