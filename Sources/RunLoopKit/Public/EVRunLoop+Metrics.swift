import RunLoopKitPlatform

extension EVRunLoop {
    /// A loop's health figures since metrics were turned on (``EVRunLoop/recordsMetrics``) or
    /// reset: how long it was busy and asleep, its passes, its wakes and why, how long its
    /// callouts ran by kind, how late its timers fired, and its longest callout.
    ///
    /// Times come from the loop's clock: exact on an ``EVVirtualClock`` (a callout takes no
    /// time there unless it moves the clock), so a test can assert every figure. On the real
    /// loop a callout's times are read from the CPU's counter, extrapolated from the clock's
    /// reading at the wake (off by the clock's slew since then, at most 500 ppm).
    ///
    /// There is no CF counterpart. libuv's `uv_metrics_idle_time` is ``asleep``, its
    /// `uv_metrics_info` counts loop iterations as ``passes`` does; SwiftNIO's tick metrics
    /// delegate reports the time of each tick.
    public struct Metrics: Sendable, Hashable {
        /// Durations counted in log-linear buckets: four to each power of two of nanoseconds
        /// (so a bucket spans at most a quarter of its lower bound), with each value's count,
        /// total and maximum. Bucket `i` holds values from ``lowerBound(ofBucket:)`` up to
        /// the next bucket's lower bound; buckets 0–3 hold 0–3 ns, the last one everything from
        /// 7 × 2^37 ns (about 962 s) up.
        ///
        /// No CF counterpart; HdrHistogram buckets values the same way, at a finer precision.
        public struct Histogram: Sendable, Hashable {
            /// How many buckets a histogram has.
            public static let bucketCount = 156

            /// How many values were recorded.
            public var count: Int
            /// Their sum.
            public var total: Duration
            /// The largest (zero when none).
            public var max: Duration
            /// How many values fell into each bucket: ``bucketCount`` of them.
            public var buckets: [Int]

            /// An empty histogram.
            public init() {
                self.init(count: 0, totalNanoseconds: 0, maxNanoseconds: 0,
                          buckets: Array(repeating: 0, count: Self.bucketCount))
            }

            init(count: Int, totalNanoseconds: Int64, maxNanoseconds: Int64, buckets: [Int]) {
                self.count = count
                total = .nanoseconds(totalNanoseconds)
                max = .nanoseconds(maxNanoseconds)
                self.buckets = buckets
            }

            /// The bucket a value of `nanos` nanoseconds falls into (negative values: bucket 0).
            ///
            /// With `e` the value's highest bit (`e >= 2`), its bucket is `4 (e - 1)` plus the
            /// two bits below the highest, that is `4 s + (value >> s)` for `s = e - 2` (the
            /// shift leaves the highest bit and those two: 4...7). Values below 4 are their
            /// own bucket, the same formula with `s = 0`, which `value | 4` gives them. No
            /// branch but the last bucket's clamp; unsigned, so that the index needs no sign check.
            @inline(__always)
            static func bucket(ofNanoseconds nanos: Int64) -> Int {
                Int(truncatingIfNeeded: Swift.min(unclampedBucket(ofNanoseconds: nanos), UInt64(bucketCount &- 1)))
            }

            /// ``bucket(ofNanoseconds:)`` before the last bucket's clamp: 0...251.
            @inline(__always)
            static func unclampedBucket(ofNanoseconds nanos: Int64) -> UInt64 {
                let value = UInt64(clamping: nanos)
                let shift = UInt64(truncatingIfNeeded: 61 &- (value | 4).leadingZeroBitCount)  // 0...61
                return 4 &* shift &+ (value &>> shift)
            }

            /// The bucket `duration` falls into.
            ///
            /// - Parameter duration: a duration (a negative one falls into bucket 0).
            /// - Returns: its bucket's index, `0..<bucketCount`.
            public static func bucket(of duration: Duration) -> Int {
                bucket(ofNanoseconds: duration.nanoseconds)
            }

            /// The smallest duration bucket `index` holds.
            ///
            /// - Parameter index: a bucket, `0..<bucketCount` (``bucketCount`` gives the last
            ///   bucket's upper end, 2^40 ns).
            /// - Returns: its lower bound.
            public static func lowerBound(ofBucket index: Int) -> Duration {
                require((0...bucketCount).contains(index),
                        "EVRunLoop.Metrics.Histogram.lowerBound(ofBucket:): bucket \(index) is not in 0...\(bucketCount)")
                guard index >= 4 else { return .nanoseconds(index) }
                return .nanoseconds(Int64(4 + index % 4) << (index / 4 - 1))
            }

            /// The mean of the values (nil when none).
            public var mean: Duration? { count == 0 ? nil : total / count }

            /// A duration at or above the `fraction` quantile of the values, by at most a
            /// quarter: the upper end of the bucket holding the value of rank
            /// `ceil(fraction × count)`, but never above ``max`` (nil when none).
            ///
            /// - Parameter fraction: the quantile, `0...1` (0.5 for the median, 0.99 for p99).
            /// - Returns: the quantile's bound.
            public func percentile(_ fraction: Double) -> Duration? {
                require((0...1).contains(fraction), "EVRunLoop.Metrics.Histogram.percentile(_:): \(fraction) is not in 0...1")
                guard count > 0 else { return nil }
                let rank = Swift.max(1, Int((fraction * Double(count)).rounded(.up)))
                var seen = 0
                for (index, inBucket) in buckets.enumerated() {
                    seen += inBucket
                    if seen >= rank { return Swift.min(Self.lowerBound(ofBucket: index + 1), max) }
                }
                return max
            }

            /// What `self` recorded since `earlier` was read: counts, totals and buckets
            /// subtracted (``max`` stays `self`'s). For a reporter that sends deltas.
            ///
            /// - Parameter earlier: an earlier snapshot of the same histogram.
            /// - Returns: the difference.
            public func subtracting(_ earlier: Histogram) -> Histogram {
                var delta = self
                delta.count -= earlier.count
                delta.total -= earlier.total
                for index in delta.buckets.indices where index < earlier.buckets.count {
                    delta.buckets[index] -= earlier.buckets[index]
                }
                return delta
            }
        }

        /// One callout: the longest one in ``longestCallout``.
        public struct Callout: Sendable, Hashable {
            /// What kind of callout.
            public var kind: CalloutKind
            /// Its label (a timer's, a source's, an observer's, a block's), or the kind's name.
            public var label: String
            /// How long it ran.
            public var duration: Duration

            /// Creates a record of a callout.
            ///
            /// - Parameters:
            ///   - kind: its kind.
            ///   - label: its label.
            ///   - duration: how long it ran.
            public init(kind: CalloutKind, label: String, duration: Duration) {
                self.kind = kind
                self.label = label
                self.duration = duration
            }
        }

        /// How long the loop was awake inside its runs: from the outermost run's start to its
        /// first sleep, from each wake to the next sleep, and from the last wake to the
        /// outermost run's return (counted when the loop falls asleep or returns).
        public var busy: Duration = .zero
        /// How long the loop slept in its waits (libuv's idle time).
        public var asleep: Duration = .zero
        /// How many times ``EVRunLoop/resetMetrics()`` set the figures back to zero: a
        /// reporter that sends differences starts again from zero when it changes.
        public var resets = 0
        /// Passes of the run loop while metrics were on, since they were first turned on or
        /// reset. ``Statistics/passes`` counts the same passes always (metrics off too), on
        /// and for the loop's own thread, reset apart (``EVRunLoop/resetStatistics()``); this
        /// one is for other threads and reporters.
        public var passes = 0
        /// Waits that slept, by why they ended (reasons that never ended one are absent).
        public var wakes: [Trace.WakeReason: Int] = [:]
        /// Callout durations by kind (kinds with no callout are absent): from a clock reading
        /// before the block, handler or callout of its object to one after it. A timer fired
        /// right after another in one pass starts at the other's end reading (one reading
        /// per fire, not two), so its duration also holds the loop's rescheduling of the
        /// one before.
        public var callouts: [CalloutKind: Histogram] = [:]
        /// How late each timer fired: the callout's start minus the fire date it served
        /// (tolerance included: a timer fired within its tolerance counts its lateness too).
        public var lateness = Histogram()
        /// The longest callout so far, with its label (nil when none ran).
        public var longestCallout: Callout?

        /// All zeros.
        public init() {}

        /// Wakes for every reason.
        public var wakeCount: Int { wakes.values.reduce(0, +) }

        /// Callouts of every kind.
        public var calloutCount: Int { callouts.values.reduce(0) { $0 + $1.count } }

        /// The share of time the loop was busy, `busy / (busy + asleep)`; nil before either.
        public var busyFraction: Double? {
            let whole = busy + asleep
            guard whole > .zero else { return nil }
            return Double(busy.nanoseconds) / Double(whole.nanoseconds)
        }
    }

    /// Whether this loop records its health figures (``metrics``). Off by default; while on,
    /// each callout reads the CPU's counter after it (and before it, unless a timer callout
    /// just ended) and adds to a few counters (no lock, no allocation, no reference
    /// counting), and each wait reads the clock before and after it. BENCHMARKS.md (the "observing"
    /// rows) has what it costs per fire.
    /// Turning it off keeps the figures; turning it on again goes on adding to them. Loop
    /// thread only.
    ///
    /// There is no CF counterpart; libuv measures its idle time once `UV_METRICS_IDLE_TIME`
    /// is set with `uv_loop_configure`.
    public var recordsMetrics: Bool {
        get {
            checkOwner("recordsMetrics")
            return engine.metrics != nil
        }
        set {
            checkOwner("recordsMetrics")
            guard newValue != (engine.metrics != nil) else { return }
            engine.setMetrics(newValue ? metricsStore.storeIfNil(LoopMetrics()) : nil)
        }
    }

    /// The figures recorded since ``recordsMetrics`` was first set (all zeros before). Any
    /// thread: each figure is exact when it is read, and figures read while the loop runs
    /// may be a few callouts apart; on the loop's thread they are one moment's. A snapshot
    /// never straddles a ``resetMetrics()``: it is read again when a reset ran meanwhile, so
    /// under one ``Metrics/resets`` count every figure only grows from snapshot to snapshot.
    ///
    /// There is no CF counterpart; libuv's `uv_metrics_info` and `uv_metrics_idle_time`.
    public var metrics: Metrics { metricsStore.load()?.snapshot() ?? Metrics() }

    /// Sets every figure of ``metrics`` back to zero. Loop thread only.
    public func resetMetrics() {
        checkOwner("resetMetrics()")
        metricsStore.load()?.reset()
        engine.restartAwakeClock()
    }
}
