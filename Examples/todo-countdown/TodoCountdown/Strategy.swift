/// How the countdown decides when to redraw.
public enum Strategy: String, CaseIterable, Codable, Sendable {
    /// The write-up's fix: a 0.1 s repeating timer that captures "now" once per tick and
    /// skips the redraw when less than 1 s passed since the last one.
    case poll
    /// A 1 s timer aligned to the wall clock's whole seconds, reading the loop's `wakeDate`.
    case aligned

    /// One line saying what the strategy does.
    public var summary: String {
        switch self {
        case .poll: "0.1 s timer, redraw when >= 1 s since the last redraw"
        case .aligned: "1 s timer aligned to whole wall-clock seconds, now = loop.wakeDate"
        }
    }
}
