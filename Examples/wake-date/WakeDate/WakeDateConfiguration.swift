/// What a ``WakeDateSession`` does.
public struct WakeDateConfiguration: Sendable {
    /// How many row timers fire in each pass (`--timers`).
    public var timers: Int
    /// Milliseconds the second row's callout takes in every other pass (`--slow`).
    public var slowMilliseconds: Double
    /// Seconds between passes.
    public var interval: Double
    /// Run a nested run in the second mode every this many passes, starting with pass 1.
    public var nestedEvery: Int

    /// Creates a configuration.
    public init(timers: Int = 3, slowMilliseconds: Double = 25, interval: Double = 1, nestedEvery: Int = 3) {
        precondition(timers >= 2, "WakeDateConfiguration: timers \(timers) must be at least 2")
        precondition(nestedEvery >= 1, "WakeDateConfiguration: nestedEvery \(nestedEvery) must be at least 1")
        self.timers = timers
        self.slowMilliseconds = slowMilliseconds
        self.interval = interval
        self.nestedEvery = nestedEvery
    }
}
