import RunLoopKit

/// A loop's health figures (`EVRunLoop.metrics`) as the examples print them
/// after `--json`, under the key `metrics`: how busy the loop was, how often it woke and why,
/// how long its callouts ran and how late its timers fired, so that two strategies compare
/// by numbers (the aligned clock against polling, a tolerance against none).
public struct LoopMetricsReport: Codable, Sendable, Equatable {
    /// Per cent of the time inside runs that the loop was awake.
    public var busyPercent: Double
    /// Wakes per second of time inside runs.
    public var wakesPerSecond: Double
    /// Wakes per second by why they came (`deadline`, `descriptor`, `signal`, `mainQueue`,
    /// `wakeUp`); reasons that never woke the loop are absent.
    public var wakesPerSecondByReason: [String: Double]
    /// Passes of the loop.
    public var passes: Int
    /// Callouts of every kind.
    public var callouts: Int
    /// Median and 99th percentile of the callouts' durations, every kind together (ms; the
    /// upper end of the histogram bucket holding them, at most a quarter above); nil with none.
    public var calloutP50Ms: Double?
    public var calloutP99Ms: Double?
    /// Median and 99th percentile of the timers' lateness (ms), as the callouts'.
    public var latenessP50Ms: Double?
    public var latenessP99Ms: Double?
    /// The longest callout, `label (kind)`, and how long it ran (ms); nil with none.
    public var longestCallout: String?
    public var longestCalloutMs: Double?

    /// The report of `metrics`.
    public init(_ metrics: EVRunLoop.Metrics) {
        let seconds = Self.seconds(metrics.busy + metrics.asleep)
        busyPercent = (metrics.busyFraction ?? 0) * 100
        wakesPerSecond = seconds > 0 ? Double(metrics.wakeCount) / seconds : 0
        wakesPerSecondByReason = Dictionary(uniqueKeysWithValues: metrics.wakes.map { reason, count in
            ("\(reason)", seconds > 0 ? Double(count) / seconds : 0)
        })
        passes = metrics.passes
        callouts = metrics.calloutCount
        var all = EVRunLoop.Metrics.Histogram()
        for histogram in metrics.callouts.values {
            all.count += histogram.count
            all.total += histogram.total
            all.max = max(all.max, histogram.max)
            for index in all.buckets.indices { all.buckets[index] += histogram.buckets[index] }
        }
        calloutP50Ms = all.percentile(0.5).map(Self.milliseconds)
        calloutP99Ms = all.percentile(0.99).map(Self.milliseconds)
        latenessP50Ms = metrics.lateness.percentile(0.5).map(Self.milliseconds)
        latenessP99Ms = metrics.lateness.percentile(0.99).map(Self.milliseconds)
        longestCallout = metrics.longestCallout.map { "\($0.label) (\($0.kind))" }
        longestCalloutMs = metrics.longestCallout.map { Self.milliseconds($0.duration) }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func milliseconds(_ duration: Duration) -> Double { seconds(duration) * 1_000 }
}

extension SummaryJSON {
    /// `summary` encoded as ``encode(_:snakeCaseKeys:)`` does, with the loop's figures added
    /// under the key `metrics`.
    public static func encode(_ summary: some Encodable, metrics: EVRunLoop.Metrics, snakeCaseKeys: Bool = false) throws -> String {
        try encode(WithMetrics(summary: summary, metrics: LoopMetricsReport(metrics)), snakeCaseKeys: snakeCaseKeys)
    }
}

/// A summary's own keys and `metrics` in one JSON object (a keyed container asked for twice
/// at one level writes into the same object).
private struct WithMetrics<Summary: Encodable>: Encodable {
    let summary: Summary
    let metrics: LoopMetricsReport

    enum Key: String, CodingKey { case metrics }

    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(metrics, forKey: .metrics)
    }
}
