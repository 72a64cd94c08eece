import Foundation
import RunLoopKit

/// What one callout saw: the three candidate "now"s, read one after the other.
public struct Reading: Sendable, Equatable {
    /// The callout's name (`row 1`, `block`, `modal`).
    public var callout: String
    /// `Date()` read in the callout.
    public var date: Date
    /// The observer-based wake date (``ObservedWakeDate``).
    public var observed: Date
    /// The built-in `EVRunLoop.wakeDate`.
    public var wakeDate: Date
    /// The built-in `EVRunLoop.wakeInstant`: equal instants mean the same pass.
    public var wakeInstant: EVRunLoop.Instant
    /// Whether this read added the observer to the running mode (lazy registration).
    public var registered: Bool

    /// Creates a reading.
    public init(
        callout: String, date: Date, observed: Date, wakeDate: Date, wakeInstant: EVRunLoop.Instant,
        registered: Bool = false
    ) {
        self.callout = callout
        self.date = date
        self.observed = observed
        self.wakeDate = wakeDate
        self.wakeInstant = wakeInstant
        self.registered = registered
    }

    /// How far `Date()` was past the loop's wake date, in seconds: the staleness of wakeDate.
    public var staleness: Double { date.timeIntervalSince(wakeDate) }

    /// The observer's date minus the built-in one, in seconds.
    public var observerOffset: Double { observed.timeIntervalSince(wakeDate) }
}
