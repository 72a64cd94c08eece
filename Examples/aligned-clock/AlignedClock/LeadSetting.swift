/// How far ahead of the second the clock fires to make up for the publish cost.
public enum LeadSetting: Sendable, Equatable {
    /// No lead: the aligned timer fires on the second and the value appears after publishing.
    case none
    /// A fixed, hand-tuned lead in seconds (the scenario's 0.18 s).
    case fixed(Double)
    /// A lead measured at run time: a calibration tick, then every publish (``LeadEstimator``).
    case automatic

    /// Parses `auto` or a number of seconds in `[0, 1)`; nil for anything else.
    public init?(argument: String) {
        if argument == "auto" {
            self = .automatic
        } else if let seconds = Double(argument), seconds.isFinite, seconds >= 0, seconds < 1 {
            self = .fixed(seconds)
        } else {
            return nil
        }
    }
}
