/// A block queued with ``EVRunLoop/perform(inModes:label:_:)``.
struct QueuedBlock {
    let modes: [EVRunLoop.Mode]
    let label: String?
    let body: @Sendable () -> Void
}

/// What other threads hand to a loop: blocks to perform, tasks that must run on the
/// loop's thread (adding a timer, invalidating a source), and executor jobs. Guarded by the loop's mutex; the
/// loop drains it at the start of every pass and after every wait.
///
/// One mechanism for the three: a push appends under the lock and says whether the pusher
/// must wake the loop; the drain swaps the arrays out under one acquisition of the lock,
/// and the arrays keep their capacity from drain to drain, so a push allocates nothing
/// once the queues have grown to the burst they carry.
struct Inbox {
    var blocks: [QueuedBlock] = []
    /// Run on the loop's thread, given its engine.
    var tasks: [@Sendable (LoopEngine) -> Void] = []
    /// Set when the loop's thread exited: nothing handed over could ever run, so nothing
    /// more is accepted.
    var isClosed = false
    var jobs: [QueuedJob] = []
    /// Whether a pusher since the last drain set out to wake the loop: its wake either ends
    /// the loop's wait (or the next one, at once), or was dropped because the loop was
    /// awake, in CF's window between a wait's end and the next pass, in which case the loop
    /// drains before it sleeps again. Either way the drain that takes what was pushed since
    /// is coming, so a later pusher sends no wake of its own (libdispatch wakes a queue only
    /// when its first item arrives; NIO skips the eventfd write while its loop is awake).
    /// Pushes that need no wake (a timer served by the planned one) leave it clear.
    var isWakeOwed = false

    /// Records that a wake is owed; returns whether the caller must send it (none was owed
    /// since the last drain).
    mutating func oweWake() -> Bool {
        defer { isWakeOwed = true }
        return !isWakeOwed
    }
}

extension Array {
    /// Moves every element of `source` to the end of this array, leaving `source` empty. When
    /// this array is empty the two buffers swap, so neither side allocates: each keeps the
    /// capacity of a buffer that has carried a batch before.
    mutating func takeAll(from source: inout [Element]) {
        guard !source.isEmpty else { return }
        if isEmpty {
            swap(&self, &source)
        } else {
            append(contentsOf: source)
            source.removeAll(keepingCapacity: true)
        }
    }
}
