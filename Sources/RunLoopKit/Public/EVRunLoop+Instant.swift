extension EVRunLoop {
    /// A moment on a loop's monotonic clock, in nanoseconds.
    ///
    /// On the libev backend this is `CLOCK_MONOTONIC`; under an ``EVVirtualClock`` it is the
    /// virtual clock's reading. Wall-clock changes never move an instant.
    ///
    /// The corresponding CF notion is the `mach_absolute_time()` / `_fireTSR` time base.
    public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
        /// Nanoseconds since the clock's origin.
        public var nanoseconds: Int64

        /// Creates an instant from nanoseconds since the clock's origin.
        ///
        /// - Parameter nanoseconds: nanoseconds on the loop's monotonic clock.
        public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

        /// The latest representable instant: "never".
        public static let distantFuture = Instant(nanoseconds: .max)

        /// Whether `a` is earlier than `b`.
        ///
        /// - Parameters:
        ///   - a: an instant.
        ///   - b: another instant.
        /// - Returns: `a.nanoseconds < b.nanoseconds`.
        public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }

        /// The instant `d` later, saturating at ``distantFuture``.
        ///
        /// - Parameters:
        ///   - a: an instant.
        ///   - d: how far to move.
        /// - Returns: `a` moved by `d`, saturating at the clock's ends.
        public static func + (a: Instant, d: Duration) -> Instant {
            let (sum, overflow) = a.nanoseconds.addingReportingOverflow(d.nanoseconds)
            return Instant(nanoseconds: overflow ? (d > .zero ? .max : .min) : sum)
        }

        /// The instant `d` earlier.
        ///
        /// - Parameters:
        ///   - a: an instant.
        ///   - d: how far to move back.
        /// - Returns: `a` moved back by `d`, saturating at the clock's ends.
        public static func - (a: Instant, d: Duration) -> Instant { a + (.zero - d) }

        /// The time from `b` to `a`.
        ///
        /// - Parameters:
        ///   - a: an instant.
        ///   - b: the instant to measure from.
        /// - Returns: the time from `b` to `a`; negative when `a` is earlier.
        public static func - (a: Instant, b: Instant) -> Duration {
            // In Duration's own range: the difference of two Int64 nanosecond counts can
            // exceed Int64 (a virtual clock may start at a negative instant).
            .nanoseconds(a.nanoseconds) - .nanoseconds(b.nanoseconds)
        }

        public var description: String { "\(Double(nanoseconds) / 1e9)s" }
    }
}

extension Duration {
    /// Whole nanoseconds, saturating at `Int64`'s range.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (sum, o2) = ns.addingReportingOverflow(attoseconds / 1_000_000_000)
        return o2 ? (seconds > 0 ? .max : .min) : sum
    }

    /// The duration as seconds in a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// A duration from seconds, rounded to whole nanoseconds.
    static func seconds(exactly value: Double) -> Duration {
        .nanoseconds(Int64((value * 1e9).rounded()))
    }
}
