/// A block queued with ``EVRunLoop/perform(inModes:label:_:)``.
struct QueuedBlock {
    let modes: [EVRunLoop.Mode]
    let label: String?
    let body: @Sendable () -> Void
}

/// What other threads hand to a loop: blocks to perform, tasks that must run on the
/// loop's thread (adding a timer, invalidating a source), and executor jobs. Guarded by the loop's mutex; the
/// loop drains it at the start of every pass and after every wait.
struct Inbox {
    var blocks: [QueuedBlock] = []
    /// Run on the loop's thread, given its engine.
    var tasks: [@Sendable (LoopEngine) -> Void] = []
    /// Set when the loop's thread exited: nothing handed over could ever run, so nothing
    /// more is accepted.
    var isClosed = false
    var jobs: [QueuedJob] = []
}
