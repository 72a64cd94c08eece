/// What few timers need, out of line, so that a timer in one mode with no tolerance is an
/// 88-byte object (a 96-byte malloc block): a label, wall-clock alignment, a release hook,
/// a tolerance, and the places in modes after the first (``EVTimer/otherPlaces``).
///
/// An ``EVTimer`` makes its extras in its initializer when given a label, an alignment, a
/// hook or a tolerance, otherwise when it first needs them (a tolerance set later, a second
/// mode); it never replaces them.
final class TimerExtras: @unchecked Sendable {
    // Safe to share: `label`, `alignmentOffsetNanos` and `loopReleased` never change;
    // `toleranceNanos` and `otherPlaces` belong to the timer's schedule, read and written
    // only where the schedule is (the loop's thread, or the creating thread before the add).
    let label: String?
    let alignmentOffsetNanos: Int64?
    let loopReleased: (@Sendable () -> Void)?
    var toleranceNanos: Int64
    var otherPlaces: [TimerPlace] = []

    init(label: String?, alignmentOffsetNanos: Int64?, loopReleased: (@Sendable () -> Void)?, toleranceNanos: Int64) {
        self.label = label
        self.alignmentOffsetNanos = alignmentOffsetNanos
        self.loopReleased = loopReleased
        self.toleranceNanos = toleranceNanos
    }
}
