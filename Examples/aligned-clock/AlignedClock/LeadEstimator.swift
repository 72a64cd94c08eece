import ExampleSupport

/// Measures how long publishing a value takes, so that the clock can fire early by that much.
///
/// The scenario's app corrected a 200 ms publish delay first with a hand-tuned 0.18 s lead,
/// then with a dummy timer that measured the overhead once at start-up. This estimator takes
/// that calibration measurement and then keeps refreshing it from every real publish: the
/// lead is the median of the most recent measurements, so one slow publish does not move it.
public struct LeadEstimator: Sendable {
    /// How many recent measurements the median is taken over.
    public let window: Int
    private var recent: [Double] = []

    /// Creates an estimator with no measurement yet.
    ///
    /// - Parameter window: how many recent measurements to keep (at least one).
    public init(window: Int = 5) {
        precondition(window >= 1, "LeadEstimator(window:): window \(window) must be at least 1")
        self.window = window
    }

    /// Adds one measured publish duration, in seconds.
    public mutating func record(_ seconds: Double) {
        recent.append(seconds)
        if recent.count > window { recent.removeFirst(recent.count - window) }
    }

    /// How many measurements the estimate rests on.
    public var count: Int { recent.count }

    /// The current lead in seconds: the median of the recent measurements, 0 before the first.
    public var lead: Double {
        var samples = Samples()
        for value in recent { samples.append(value) }
        return samples.median
    }
}
