import Foundation

/// The readings of one pass of the scene: the row timers, then the block.
public struct PassRecord: Sendable {
    /// The pass's number in the session, from 0.
    public var index: Int
    /// Whether a row callout in this pass was slow (every other pass, with `--slow`).
    public var isSlow: Bool
    /// Whether the block ran a nested run in the second mode.
    public var ranNested = false
    /// The readings in callout order.
    public var readings: [Reading] = []
    /// The position in ``readings`` of the slow callout, if any.
    public var slowIndex: Int?

    /// Creates an empty record.
    public init(index: Int, isSlow: Bool) {
        self.index = index
        self.isSlow = isSlow
    }

    /// Whether the observer registered itself during this pass (its date is then the
    /// registration's, not the wake's).
    public var registered: Bool { readings.contains(where: \.registered) }

    /// Whether every reading was taken after the same wake.
    public var isOnePass: Bool { Set(readings.map(\.wakeInstant)).count <= 1 }

    /// Latest minus earliest `Date()` of the pass, in seconds.
    public var dateSpread: Double { Self.spread(readings.map(\.date)) }

    /// Latest minus earliest observer date of the pass, in seconds.
    public var observedSpread: Double { Self.spread(readings.map(\.observed)) }

    /// Latest minus earliest built-in wake date of the pass, in seconds.
    public var wakeDateSpread: Double { Self.spread(readings.map(\.wakeDate)) }

    /// The readings of the callouts that ran after the slow one.
    public var afterSlow: [Reading] {
        guard let slowIndex else { return [] }
        return Array(readings[(slowIndex + 1)...])
    }

    private static func spread(_ dates: [Date]) -> Double {
        guard let first = dates.min(), let last = dates.max() else { return 0 }
        return last.timeIntervalSince(first)
    }
}
