import Foundation

/// Formats an elapsed time as `mm:ss` + the locale's decimal separator + hundredths
/// (`05:07.42`, or `05:07,42` in a comma locale).
///
/// Digits are ASCII and zero-padded to a fixed width, so the line never jitters; hundredths
/// are truncated, never rounded up, so `00:00.99` is never shown as `00:01.00` early.
public struct ElapsedFormat: Sendable {
    /// The decimal separator, from Foundation's locale data.
    public let decimalSeparator: String

    /// Creates a format for `locale`.
    public init(locale: Locale) {
        decimalSeparator = locale.decimalSeparator ?? "."
    }

    /// The text for `elapsed` (negative durations show as zero).
    public func string(_ elapsed: Duration) -> String {
        let hundredths = max(0, Self.hundredths(of: elapsed))
        let minutes = hundredths / 6000
        let seconds = hundredths / 100 % 60
        return Self.padded(minutes) + ":" + Self.padded(seconds) + decimalSeparator + Self.padded(hundredths % 100)
    }

    /// Whole hundredths of a second in `duration`, truncated toward zero.
    public static func hundredths(of duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 100 + attoseconds / 10_000_000_000_000_000
    }

    private static func padded(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
