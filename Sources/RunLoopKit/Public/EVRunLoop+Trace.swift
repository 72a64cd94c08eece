extension EVRunLoop {
    /// A record of everything a loop did, in order: each notification point of the pass and
    /// each callout. Set ``EVRunLoop/trace`` to start recording; tests can then assert a
    /// whole run in one line:
    ///
    /// ```swift
    /// let loop = EVRunLoop(clock: EVVirtualClock())
    /// let trace = EVRunLoop.Trace()
    /// loop.trace = trace
    /// loop.add(EVTimer(interval: 0.5, repeats: false, label: "tick") { _ in }, forMode: .default)
    /// loop.run(mode: .default, for: .seconds(1))
    /// #expect(trace.lines == ["entry", "beforeTimers", "beforeSources", "beforeWaiting",
    ///                         "afterWaiting", "timer(tick)", "exit", "return(finished)"])
    /// ```
    ///
    /// Notification points are recorded whether or not an observer listens, so a trace shows
    /// the pass structure of CFRunLoop's `__CFRunLoopRun`. There is no CF counterpart.
    public final class Trace {
        /// One step of a run.
        public enum Event: Hashable, Sendable, CustomStringConvertible {
            /// The pass reached a notification point.
            case activity(Activity)
            /// An observer was called for an activity.
            case observer(String, Activity)
            /// A timer fired.
            case timer(String)
            /// A source fired.
            case source(String)
            /// A block queued with ``EVRunLoop/perform(inModes:label:_:)`` ran.
            case block(String)
            /// A job of the loop's executor ran (an actor pinned to the loop, a task preferring it).
            case job
            /// The main loop ran libdispatch's main queue (`DispatchQueue.main`, the main actor).
            case mainQueue
            /// A run returned.
            case returned(RunResult)

            /// `entry`, `o1@beforeWaiting`, `timer(t)`, `source(s)`, `block(b)`, `job`, `mainQueue`,
            /// `return(timedOut)`.
            public var description: String {
                switch self {
                case .activity(let activity): "\(activity)"
                case .observer(let label, let activity): "\(label)@\(activity)"
                case .timer(let label): "timer(\(label))"
                case .source(let label): "source(\(label))"
                case .block(let label): "block(\(label))"
                case .job: "job"
                case .mainQueue: "mainQueue"
                case .returned(let result): "return(\(result))"
                }
            }
        }

        /// The most recent events, oldest first: at most ``capacity`` of them.
        public var events: [Event] { Array(ring[start...] + ring[..<start]) }

        /// How many events the trace keeps; older ones are dropped (counted in ``droppedCount``).
        public let capacity: Int

        /// How many events were dropped to stay within ``capacity``.
        public private(set) var droppedCount = 0

        private var ring: [Event] = []
        /// Index of the oldest event in `ring` once it is full.
        private var start = 0

        /// Creates an empty trace that keeps the last `capacity` events.
        ///
        /// - Parameter capacity: how many events to keep, at least 1 (default 10,000).
        public init(capacity: Int = 10_000) {
            guard capacity >= 1 else { fatalError("EVRunLoop.Trace(capacity:): capacity \(capacity) must be at least 1") }
            self.capacity = capacity
        }

        /// The events as their descriptions, for one-line assertions.
        public var lines: [String] { events.map(\.description) }

        /// Forgets everything recorded so far.
        public func removeAll() {
            ring.removeAll()
            start = 0
            droppedCount = 0
        }

        func record(_ event: Event) {
            if ring.count < capacity {
                ring.append(event)
            } else {
                ring[start] = event
                start = (start + 1) % capacity
                droppedCount += 1
            }
        }
    }
}
