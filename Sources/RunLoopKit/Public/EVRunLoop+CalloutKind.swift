extension EVRunLoop {
    /// What kind of callout a loop made: the kind a ``Stall`` report, a ``Metrics/Callout``
    /// and ``Metrics/callouts`` name.
    ///
    /// The corresponding CFRunLoop functions are its callout trampolines
    /// (`__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__` and its siblings).
    public enum CalloutKind: UInt8, Sendable, Hashable {
        /// A timer's block.
        case timer = 1
        /// A source's handler.
        case source
        /// An observer's callout.
        case observer
        /// A block queued with ``EVRunLoop/perform(inModes:label:_:)``.
        case block
        /// A job of the loop's executor.
        case job
        /// libdispatch's main queue, run by the main loop.
        case mainQueue
    }
}

extension EVRunLoop.Trace.Event {
    /// A callout event's kind (for stall reports and metrics; only callouts have one).
    var calloutKind: EVRunLoop.CalloutKind {
        switch self {
        case .timer: .timer
        case .source: .source
        case .observer: .observer
        case .job: .job
        case .mainQueue: .mainQueue
        case .block, .activity, .returned: .block
        }
    }
}
