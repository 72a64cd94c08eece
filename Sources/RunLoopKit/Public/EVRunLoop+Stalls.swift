import RunLoopKitPlatform

extension EVRunLoop {
    /// A callout that ran, or still runs, past the threshold given to
    /// ``EVRunLoop/reportStalls(over:_:)``.
    public struct Stall: Sendable, Hashable, CustomStringConvertible {
        /// The kind of a callout, now ``EVRunLoop/CalloutKind``, which metrics name too.
        @available(*, deprecated, renamed: "EVRunLoop.CalloutKind")
        public typealias Kind = CalloutKind

        /// What kind of callout.
        public var kind: CalloutKind
        /// Its label (a timer's, a source's, an observer's, a block's), or the kind's name; a
        /// report made while the callout runs has the label's first 32 bytes.
        public var label: String
        /// How long it ran: until now for a report made while it runs, in all when it returned.
        public var duration: Duration
        /// Whether the callout had returned: false for the report the watchdog thread makes
        /// while it still runs (a callout that never returns gets this one only).
        public var isFinished: Bool

        /// Creates a report.
        ///
        /// - Parameters:
        ///   - kind: the callout's kind.
        ///   - label: its label.
        ///   - duration: how long it ran.
        ///   - isFinished: whether it had returned.
        public init(kind: CalloutKind, label: String, duration: Duration, isFinished: Bool) {
            self.kind = kind
            self.label = label
            self.duration = duration
            self.isFinished = isFinished
        }

        /// `timer(t) ran 0.250 s`, or `… running for …` while it runs.
        public var description: String {
            "\(kind)(\(label)) \(isFinished ? "ran" : "running for") \(duration)"
        }
    }

    /// Reports every callout of this loop that runs past `threshold`: once from a watchdog
    /// thread while it still runs (so a callout that never returns is reported too), and
    /// once on the loop's thread when it returns. Replaces an earlier setting; call
    /// ``stopReportingStalls()`` to end it. Off by default: with no report asked for, a
    /// callout costs no more than a test of an optional. While on, each callout publishes
    /// itself in atomics (no lock, no wake of the loop) and the watchdog thread wakes every
    /// quarter of the threshold (at most every 50 ms). Loop thread only.
    ///
    /// - Parameters:
    ///   - threshold: how long a callout may run before it is reported, more than zero.
    ///   - handler: called with each report, on the watchdog thread or the loop's thread.
    ///
    /// There is no CF counterpart; Android's StrictMode and UI toolkits' hang detectors
    /// report a main-thread callout that blocked too long.
    public func reportStalls(over threshold: Duration, _ handler: @escaping @Sendable (Stall) -> Void) {
        checkOwner("reportStalls(over:_:)")
        require(threshold > .zero, "EVRunLoop.reportStalls(over:_:): threshold \(threshold) must be greater than zero")
        engine.replaceStallWatch { StallWatch.start(threshold: threshold.nanoseconds, handler: handler) }
    }

    /// Ends the stall reports that ``reportStalls(over:_:)`` started, and their watchdog
    /// thread. Loop thread only.
    public func stopReportingStalls() {
        checkOwner("stopReportingStalls()")
        engine.replaceStallWatch { nil }
    }
}
