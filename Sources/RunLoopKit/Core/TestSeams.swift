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
}

extension LoopShared {
    /// Calls the hook at `seam`, if a test set one (outside the lock: a hook may set hooks).
    func seam(_ seam: KeyPath<TestSeams, (@Sendable () -> Void)?>) {
        if let hook = seams.withLock({ $0[keyPath: seam] }) { hook() }
    }
}
#endif
