// Compiled with the package trait "Metrics" only (TraitRequired.swift says why).
#if Metrics
import CoreMetrics
import RunLoopKit
import Synchronization

/// Reports a loop's health figures (`EVRunLoop.metrics`) through
/// apple/swift-metrics: each ``report()`` sends what the loop recorded since the last one.
///
/// The names follow Prometheus's conventions (swift-prometheus exports them as they are):
/// times in seconds, the base unit, counters ending in `_total`, and labels of bounded
/// cardinality. Every metric carries the dimension `loop` (the label given here); those by
/// kind or reason add `kind` (`timer`, `source`, `observer`, `block`, `job`, `mainQueue`) or
/// `reason` (`deadline`, `descriptor`, `signal`, `mainQueue`, `wakeUp`):
///
/// | metric | type | what |
/// | --- | --- | --- |
/// | `runloop_passes_total` | Counter | passes of the loop |
/// | `runloop_wakes_total` | Counter, `reason` | waits that ended, by why |
/// | `runloop_callouts_total` | Counter, `kind` | callouts run |
/// | `runloop_busy_seconds_total` | FloatingPointCounter | time awake inside runs |
/// | `runloop_asleep_seconds_total` | FloatingPointCounter | time asleep in waits (libuv's idle time) |
/// | `runloop_busy_ratio` | Gauge | busy ÷ (busy + asleep) since the last report |
/// | `runloop_callout_duration_seconds` | Timer, `kind` | how long callouts ran |
/// | `runloop_timer_lateness_seconds` | Timer | how late timers fired |
/// | `runloop_longest_callout_seconds` | Gauge, `kind` (and `callout`, opt-in) | the longest callout so far |
///
/// A callout's label is free text, so the longest callout's gauge names it (in a `callout`
/// dimension) only when asked to, for at most `calloutLabels` distinct labels; later labels
/// read `other`, so that the series stay bounded.
///
/// The loop keeps its durations in buckets (`EVRunLoop.Metrics.Histogram`), not
/// one by one, so a Timer gets each new value as its bucket's midpoint (at most an eighth
/// off the value, never above the largest recorded); and at most `samplesPerReport` values
/// per Timer and report, spread over the buckets in their proportions, so that a busy loop's
/// report stays short (the counters still count every callout).
///
/// The loop must record its metrics (`EVRunLoop.recordsMetrics`):
///
/// ```swift
/// let loop = EVRunLoop.current
/// loop.recordsMetrics = true
/// let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main")
/// reporter.start(every: .seconds(10))  // or call reporter.report() yourself, from any thread
/// ```
///
/// There is no CF counterpart; SwiftNIO's tick metrics delegate leaves the reporting to its
/// user, libuv's `uv_metrics_info` to its caller.
public final class EVRunLoopMetricsReporter: Sendable {
    /// The loop reported on.
    public let loop: EVRunLoop
    /// The value of the `loop` dimension.
    public let label: String
    /// The most values a Timer gets per report.
    public let samplesPerReport: Int
    /// The most distinct callout labels the longest callout's gauge names; 0 (the default)
    /// leaves the `callout` dimension out.
    public let calloutLabels: Int

    private let factory: any MetricsFactory
    private let passes: Counter
    private let wakes: [EVRunLoop.Trace.WakeReason: Counter]
    private let callouts: [EVRunLoop.CalloutKind: Counter]
    private let durations: [EVRunLoop.CalloutKind: CoreMetrics.Timer]
    private let busy: FloatingPointCounter
    private let asleep: FloatingPointCounter
    private let busyRatio: Gauge
    private let lateness: CoreMetrics.Timer
    /// What the last report saw, and the gauge of the longest callout it reported.
    private let state = Mutex<(last: EVRunLoop.Metrics, longest: (EVRunLoop.Metrics.Callout, Gauge)?)>((EVRunLoop.Metrics(), nil))
    /// The callout labels the gauge named so far, at most ``calloutLabels`` of them.
    private let namedCallouts = Mutex<Set<String>>([])
    private let reportTimer = Mutex<EVTimer?>(nil)

    /// The kinds and reasons as the dimensions name them.
    static let kinds: [(EVRunLoop.CalloutKind, String)] = [
        (.timer, "timer"), (.source, "source"), (.observer, "observer"), (.block, "block"), (.job, "job"),
        (.mainQueue, "mainQueue"),
    ]
    static let reasons: [(EVRunLoop.Trace.WakeReason, String)] = [
        (.deadline, "deadline"), (.descriptor, "descriptor"), (.signal, "signal"), (.mainQueue, "mainQueue"),
        (.wakeUp, "wakeUp"),
    ]

    /// Creates a reporter for `loop`; nothing is reported before ``report()`` or ``start(every:)``.
    ///
    /// - Parameters:
    ///   - loop: the loop, which should record its metrics (`EVRunLoop.recordsMetrics`).
    ///   - label: the value of every metric's `loop` dimension.
    ///   - samplesPerReport: the most values a Timer gets per report (default 1,000), at least 1.
    ///   - calloutLabels: the most distinct callout labels the longest callout's gauge names in
    ///     a `callout` dimension (default 0: no such dimension); later labels read `other`.
    ///   - factory: where the metrics go (default: the bootstrapped `MetricsSystem.factory`).
    public init(loop: EVRunLoop, label: String, samplesPerReport: Int = 1_000, calloutLabels: Int = 0,
                factory: any MetricsFactory = MetricsSystem.factory) {
        require(samplesPerReport >= 1, "EVRunLoopMetricsReporter: samplesPerReport \(samplesPerReport) must be at least 1")
        require(calloutLabels >= 0, "EVRunLoopMetricsReporter: calloutLabels \(calloutLabels) is negative")
        self.loop = loop
        self.label = label
        self.samplesPerReport = samplesPerReport
        self.calloutLabels = calloutLabels
        self.factory = factory
        let loopDimension = [("loop", label)]
        passes = Counter(label: "runloop_passes_total", dimensions: loopDimension, factory: factory)
        wakes = Dictionary(uniqueKeysWithValues: Self.reasons.map { reason, name in
            (reason, Counter(label: "runloop_wakes_total", dimensions: loopDimension + [("reason", name)], factory: factory))
        })
        callouts = Dictionary(uniqueKeysWithValues: Self.kinds.map { kind, name in
            (kind, Counter(label: "runloop_callouts_total", dimensions: loopDimension + [("kind", name)], factory: factory))
        })
        durations = Dictionary(uniqueKeysWithValues: Self.kinds.map { kind, name in
            (kind, CoreMetrics.Timer(label: "runloop_callout_duration_seconds", dimensions: loopDimension + [("kind", name)],
                                     factory: factory))
        })
        busy = FloatingPointCounter(label: "runloop_busy_seconds_total", dimensions: loopDimension, factory: factory)
        asleep = FloatingPointCounter(label: "runloop_asleep_seconds_total", dimensions: loopDimension, factory: factory)
        busyRatio = Gauge(label: "runloop_busy_ratio", dimensions: loopDimension, factory: factory)
        lateness = CoreMetrics.Timer(label: "runloop_timer_lateness_seconds", dimensions: loopDimension, factory: factory)
    }

    /// Reports what the loop recorded since the last report (or since its metrics started).
    /// Any thread; reports are made one at a time. Metrics reset on the loop
    /// (`EVRunLoop.resetMetrics()`) start the differences again from zero.
    public func report() {
        state.withLock { state in
            let now = loop.metrics
            var last = state.last
            // A reset on the loop: everything counted again from zero.
            if now.resets != last.resets {
                last = EVRunLoop.Metrics()
                last.resets = now.resets
            }
            // Under one reset count the loop's snapshots never go backwards; a difference that
            // did would be no count of anything, and a counter only ever grows.
            let passDelta = now.passes - last.passes
            if passDelta > 0 { passes.increment(by: passDelta) }
            for (reason, counter) in wakes {
                let delta = (now.wakes[reason] ?? 0) - (last.wakes[reason] ?? 0)
                if delta > 0 { counter.increment(by: delta) }
            }
            let busyDelta = (now.busy - last.busy).nanoseconds
            let asleepDelta = (now.asleep - last.asleep).nanoseconds
            if busyDelta > 0 { busy.increment(by: Double(busyDelta) / 1e9) }
            if asleepDelta > 0 { asleep.increment(by: Double(asleepDelta) / 1e9) }
            if busyDelta + asleepDelta > 0 { busyRatio.record(Double(busyDelta) / Double(busyDelta + asleepDelta)) }
            for (kind, histogram) in now.callouts {
                let delta = histogram.subtracting(last.callouts[kind] ?? EVRunLoop.Metrics.Histogram())
                guard delta.count > 0 else { continue }
                callouts[kind]?.increment(by: delta.count)
                if let timer = durations[kind] { record(delta, into: timer) }
            }
            record(now.lateness.subtracting(last.lateness), into: lateness)
            if let longest = now.longestCallout, longest != state.longest?.0 {
                state.longest?.1.destroy()
                let name = Self.kinds.first { $0.0 == longest.kind }?.1 ?? "callout"
                let gauge = Gauge(label: "runloop_longest_callout_seconds",
                                  dimensions: [("loop", label), ("kind", name)] + calloutDimension(longest.label),
                                  factory: factory)
                gauge.record(Double(longest.duration.nanoseconds) / 1e9)
                state.longest = (longest, gauge)
            }
            state.last = now
        }
    }

    /// The `callout` dimension for `callout`: none unless ``calloutLabels`` is above 0; the
    /// label itself for the first ``calloutLabels`` distinct labels, `other` for the rest.
    private func calloutDimension(_ callout: String) -> [(String, String)] {
        guard calloutLabels > 0 else { return [] }
        let named = namedCallouts.withLock { named in
            if named.contains(callout) { return true }
            guard named.count < calloutLabels else { return false }
            named.insert(callout)
            return true
        }
        return [("callout", named ? callout : "other")]
    }

    /// Sends a histogram's new values to `timer`: each as its bucket's midpoint (clamped to
    /// the largest value recorded), at most `samplesPerReport` of them in the buckets'
    /// proportions (at least one for a bucket that got any).
    private func record(_ delta: EVRunLoop.Metrics.Histogram, into timer: CoreMetrics.Timer) {
        guard delta.count > 0 else { return }
        let largest = delta.max.nanoseconds
        for (index, count) in delta.buckets.enumerated() where count > 0 {
            let times = delta.count <= samplesPerReport ? count : max(1, count * samplesPerReport / delta.count)
            let lower = EVRunLoop.Metrics.Histogram.lowerBound(ofBucket: index).nanoseconds
            let upper = EVRunLoop.Metrics.Histogram.lowerBound(ofBucket: index + 1).nanoseconds
            let value = min(lower + (upper - lower) / 2, max(largest, lower))
            for _ in 0..<times { timer.recordNanoseconds(value) }
        }
    }

    /// Reports every `interval` from a repeating timer in the loop's common modes (labelled
    /// "metrics report"), until ``stop()``; replaces an earlier start. Any thread.
    ///
    /// - Parameter interval: the time between reports, more than zero.
    public func start(every interval: Duration) {
        require(interval > .zero, "EVRunLoopMetricsReporter.start(every:): interval \(interval) must be greater than zero")
        let timer = EVTimer(interval: interval, repeats: true, label: "metrics report") { [weak self] _ in self?.report() }
        reportTimer.withLock { $0 }?.invalidate()
        reportTimer.withLock { $0 = timer }
        loop.add(timer, forMode: .common)
    }

    /// Ends the reports that ``start(every:)`` started. Any thread.
    public func stop() {
        reportTimer.withLock { $0.take() }?.invalidate()
    }

    deinit { reportTimer.withLock { $0.take() }?.invalidate() }
}

extension Duration {
    /// The whole nanoseconds (truncated), as an `Int64`.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
#endif
