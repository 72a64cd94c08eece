extension EVRunLoop {
    /// Why ``EVRunLoop/run(mode:until:returnAfterSourceHandled:)-(_,Date,_)`` returned.
    ///
    /// The corresponding CFRunLoop type is `CFRunLoopRunResult`; the raw values are CF's.
    public enum RunResult: Int, Sendable, CustomStringConvertible {
        /// The mode had, or came to have, no timers, sources or blocks (`kCFRunLoopRunFinished`).
        case finished = 1
        /// ``EVRunLoop/stop()`` was called (`kCFRunLoopRunStopped`).
        case stopped = 2
        /// The deadline passed (`kCFRunLoopRunTimedOut`).
        case timedOut = 3
        /// A source fired and the run was asked to return after one (`kCFRunLoopRunHandledSource`).
        case handledSource = 4

        public var description: String {
            switch self {
            case .finished: "finished"
            case .stopped: "stopped"
            case .timedOut: "timedOut"
            case .handledSource: "handledSource"
            }
        }
    }
}
