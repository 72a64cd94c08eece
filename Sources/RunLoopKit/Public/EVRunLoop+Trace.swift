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
    /// the pass structure of CFRunLoop's `__CFRunLoopRun`.
    ///
    /// Each entry also has its instant on the loop's clock (exact on an ``EVVirtualClock``,
    /// so a test can assert times as well as order; on the real loop a callout's times come
    /// from the CPU's counter, extrapolated from the clock's reading at the wake, and a timer
    /// fired right after another in one pass begins where that one ended), callouts have how
    /// long they ran, and
    /// waits appear as a `sleep` (with the deadline asked for) and a `wake` (with its reason:
    /// ``WakeReason``): see ``entries`` and ``timedLines(since:)``, which prints a run as
    /// `"0.000 sleep until 10.000"`, `"10.000 wake(deadline)"`, `"10.000 timer(t) 2.000"`
    /// (milliseconds). ``lines`` leaves times and waits out, for assertions of order only.
    /// There is no CF counterpart; libuv's `uv_metrics_info` and SwiftNIO's tick metrics
    /// report some of the same times.
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

        /// Why a wait ended.
        public enum WakeReason: Hashable, Sendable, CustomStringConvertible {
            /// The deadline the loop asked for came: a timer's, or the run's.
            case deadline
            /// A watched descriptor became ready (a descriptor, file or child source's).
            case descriptor
            /// A POSIX signal arrived for a signal source.
            case signal
            /// libdispatch's main queue got work (the main loop).
            case mainQueue
            /// ``EVRunLoop/wakeUp()``, or what calls it: a block, a timer or a source handed
            /// over from another thread, a `stop()`.
            case wakeUp

            /// `deadline`, `descriptor`, `signal`, `mainQueue` or `wakeUp`.
            public var description: String {
                switch self {
                case .deadline: "deadline"
                case .descriptor: "descriptor"
                case .signal: "signal"
                case .mainQueue: "mainQueue"
                case .wakeUp: "wakeUp"
                }
            }
        }

        /// One recorded step with its time on the loop's clock.
        public struct Entry: Hashable, Sendable {
            /// What the loop did.
            public enum Step: Hashable, Sendable {
                /// An event of ``Trace/events``: a notification point, a callout, a return.
                case event(Event)
                /// The loop went to sleep until `deadline` at the latest (the end of its timers'
                /// wake window or the run's deadline; nil: none, until an event).
                case sleep(until: Instant?)
                /// The loop woke, for `reason`.
                case wake(WakeReason)
            }

            /// What the loop did.
            public var step: Step
            /// When, on the loop's clock (``EVRunLoop/Instant``; exact on a virtual clock); for
            /// a callout, when it began.
            public var instant: Instant
            /// For a callout, how long it ran; nil for other steps, and while it runs.
            public var duration: Duration?
            /// The mode of the innermost run going on when it happened (the run a step belongs
            /// to; for a run's own `entry` and `return`, that run's); nil outside every run, and
            /// in a run whose `entry` came before the trace was set. CF's counterpart is
            /// `CFRunLoopCopyCurrentMode` read at that moment.
            public var mode: Mode?
            /// How many runs of the loop were going on when it happened: 1 for the steps of an
            /// outermost run, 2 for those of a run nested in one of its callouts, 0 outside
            /// every run (the `return(finished)` of a run whose mode was empty).
            public var depth: Int

            /// Creates an entry.
            ///
            /// - Parameters:
            ///   - step: what the loop did.
            ///   - instant: when.
            ///   - duration: how long a callout ran.
            ///   - mode: the mode of the innermost run going on.
            ///   - depth: how many runs were going on.
            public init(step: Step, instant: Instant, duration: Duration? = nil, mode: Mode? = nil, depth: Int = 0) {
                self.step = step
                self.instant = instant
                self.duration = duration
                self.mode = mode
                self.depth = depth
            }
        }

        /// The most recent entries, oldest first: at most ``capacity`` of them.
        public var entries: [Entry] {
            let start = ring.count == capacity ? next : 0
            return (ring[start...] + ring[..<start]).map { record in
                Entry(step: record.step, instant: record.instant, duration: record.duration,
                      mode: record.modeSlot >= 0 ? modes[Int(record.modeSlot)] : nil, depth: Int(record.depth))
            }
        }

        /// The most recent events, oldest first (the sleeps and wakes of ``entries`` left out).
        public var events: [Event] {
            entries.compactMap { entry in
                if case .event(let event) = entry.step { event } else { nil }
            }
        }

        /// How many entries the trace keeps; older ones are dropped (counted in ``droppedCount``).
        public let capacity: Int

        /// How many entries were dropped to stay within ``capacity``.
        public var droppedCount: Int { recorded - base - ring.count }

        /// An entry as the ring keeps it: its mode as a slot of ``modes``, so that recording a
        /// step copies no string (a `Mode` per entry cost each record a retain and release).
        private struct Record {
            var step: Entry.Step
            var instant: Instant
            var duration: Duration?
            var depth: Int32
            /// A slot of ``modes``, or -1: none.
            var modeSlot: Int32
        }

        // All but `modes` skip Swift's dynamic exclusivity checks (`@exclusivity(unchecked)`):
        // a trace is used on its loop's thread, and no access to these spans a callout, so
        // accesses never overlap. What the checks cost a callout: Benchmarks/PROFILING.md,
        // "Watching a loop".
        @exclusivity(unchecked) private var ring: [Record] = []
        /// Each mode a recorded run ran, once. Loop thread (as the whole trace).
        private var modes: [Mode] = []
        /// The slot of the mode of the run going on at each depth (depth 1 first), as the
        /// runs' `entry` steps recorded them. Loop thread, unchecked: read at every record.
        @exclusivity(unchecked) private var modeSlotAtDepth: [Int32] = []
        /// How many entries were ever recorded, and that count at the last ``removeAll()``.
        @exclusivity(unchecked) private var recorded = 0
        @exclusivity(unchecked) private var base = 0
        /// Where the next entry goes in `ring` (once full, the oldest entry's place).
        @exclusivity(unchecked) private var next = 0

        /// Creates an empty trace that keeps the last `capacity` entries.
        ///
        /// - Parameter capacity: how many entries to keep, at least 1 (default 10,000).
        public init(capacity: Int = 10_000) {
            guard capacity >= 1 else { fatalError("EVRunLoop.Trace(capacity:): capacity \(capacity) must be at least 1") }
            self.capacity = capacity
        }

        /// The events as their descriptions, for one-line assertions of order.
        public var lines: [String] { events.map(\.description) }

        /// The entries with their times, for assertions of order and time: each line is the
        /// milliseconds since `origin` (three decimals), the step, and for a callout how long
        /// it ran: `"10.000 timer(t) 0.250"`, `"0.000 sleep until 10.000"`,
        /// `"10.000 wake(deadline)"`, `"0.000 sleep"` for a wait with no deadline.
        ///
        /// - Parameter origin: the instant shown as 0 (default: the first entry's).
        /// - Returns: one line per entry, oldest first.
        public func timedLines(since origin: Instant? = nil) -> [String] {
            let all = entries
            guard let zero = origin ?? all.first?.instant else { return [] }
            func ms(_ nanos: Int64) -> String {
                let micros = (nanos - zero.nanoseconds) / 1_000
                let sign = micros < 0 ? "-" : ""
                let whole = abs(micros)
                let fraction = String(whole % 1_000)
                return "\(sign)\(whole / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
            }
            func span(_ duration: Duration) -> String {
                let micros = duration.nanoseconds / 1_000
                let fraction = String(micros % 1_000)
                return "\(micros / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
            }
            return all.map { entry in
                let at = ms(entry.instant.nanoseconds)
                switch entry.step {
                case .event(let event):
                    return entry.duration.map { "\(at) \(event) \(span($0))" } ?? "\(at) \(event)"
                case .sleep(let deadline):
                    return deadline.map { "\(at) sleep until \(ms($0.nanoseconds))" } ?? "\(at) sleep"
                case .wake(let reason):
                    return "\(at) wake(\(reason))"
                }
            }
        }

        /// Forgets everything recorded so far.
        public func removeAll() {
            ring.removeAll()
            base = recorded
            next = 0
        }

        /// Records `step` at `instant`, `depth` runs deep; `entering` is the mode of the run
        /// whose `entry` this is (nil for every other step). Returns the step's number, for
        /// ``finish(_:at:)``.
        @discardableResult
        func record(_ step: Entry.Step, at instant: Instant, depth: Int, entering mode: Mode? = nil) -> Int {
            var slot: Int32 = -1
            if let mode, depth >= 1 {
                slot = Int32(modes.firstIndex(of: mode) ?? { modes.append(mode); return modes.count - 1 }())
                if modeSlotAtDepth.count < depth { modeSlotAtDepth += repeatElement(-1, count: depth - modeSlotAtDepth.count) }
                modeSlotAtDepth[depth - 1] = slot
            } else if depth >= 1, depth <= modeSlotAtDepth.count {
                slot = modeSlotAtDepth[depth - 1]
            }
            let entry = Record(step: step, instant: instant, duration: nil, depth: Int32(truncatingIfNeeded: depth), modeSlot: slot)
            if ring.count < capacity {
                ring.append(entry)
            } else {
                ring[next] = entry
            }
            next += 1
            if next == capacity { next = 0 }
            recorded += 1
            return recorded - 1
        }


        /// Sets the duration of the callout recorded as `number`, which ended at `end`, if the
        /// trace still keeps it.
        func finish(_ number: Int, at end: Instant) {
            guard number >= base, number >= recorded - ring.count, number < recorded else { return }
            // Entries before the latest sit just before `next` in the ring (no division).
            var index = next - (recorded - number)
            if index < 0 { index += capacity }
            ring[index].duration = .nanoseconds(end.nanoseconds - ring[index].instant.nanoseconds)
        }
    }
}
