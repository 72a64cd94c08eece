/// One way of driving a clock display, measured side by side by ``ClockSession``.
public enum Strategy: String, CaseIterable, Codable, Sendable {
    /// A plain 1 s repeating timer, started at an arbitrary moment: steady period, any phase.
    case naive
    /// A 0.1 s repeating timer that redraws when the displayed second changed.
    case polling
    /// A wall-clock aligned 1 s timer (`EVTimer(alignedTo: 1)`), publishing on the tick.
    case aligned
    /// The aligned timer fired early by the publish cost, so that the published value lands
    /// on the second.
    case alignedWithLead

    /// The name shown in the live display and the summary table.
    public var title: String {
        switch self {
        case .naive: "naive 1 s timer"
        case .polling: "0.1 s polling"
        case .aligned: "aligned 1 s timer"
        case .alignedWithLead: "aligned + lead"
        }
    }
}
