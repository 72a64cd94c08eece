import Foundation

/// The wall-clock second a moment falls in: what a countdown redrawn at that moment shows.
public enum DisplayedSecond {
    /// `floor(now)` in whole seconds since 1970.
    public static func of(_ now: Date) -> Int64 {
        Int64(now.timeIntervalSince1970.rounded(.down))
    }
}
