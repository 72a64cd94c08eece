extension EVRunLoop {
    /// The points of a run at which observers are called, with CFRunLoop's bit values.
    ///
    /// The corresponding CFRunLoop type is `CFRunLoopActivity`.
    public struct Activity: OptionSet, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt

        /// Creates an activity set from its bits (CF's `CFRunLoopActivity` values).
        ///
        /// - Parameter rawValue: the bits, one per activity.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// A run is starting, after the mode was found non-empty (`kCFRunLoopEntry`).
        public static let entry = Activity(rawValue: 1 << 0)
        /// A pass is about to fire due timers (`kCFRunLoopBeforeTimers`).
        public static let beforeTimers = Activity(rawValue: 1 << 1)
        /// A pass is about to fire signalled sources (`kCFRunLoopBeforeSources`).
        public static let beforeSources = Activity(rawValue: 1 << 2)
        /// The loop is about to sleep; skipped by a polling pass (`kCFRunLoopBeforeWaiting`).
        public static let beforeWaiting = Activity(rawValue: 1 << 5)
        /// The loop woke from its sleep; skipped by a polling pass (`kCFRunLoopAfterWaiting`).
        public static let afterWaiting = Activity(rawValue: 1 << 6)
        /// The run is returning (`kCFRunLoopExit`).
        public static let exit = Activity(rawValue: 1 << 7)
        /// Every activity (`kCFRunLoopAllActivities`).
        public static let allActivities = Activity(rawValue: 0x0FFF_FFFF)

        static let named: [(Activity, String)] = [
            (.entry, "entry"), (.beforeTimers, "beforeTimers"), (.beforeSources, "beforeSources"),
            (.beforeWaiting, "beforeWaiting"), (.afterWaiting, "afterWaiting"), (.exit, "exit"),
        ]

        public var description: String {
            if self == .allActivities { return "allActivities" }
            let names = Self.named.filter { contains($0.0) }.map(\.1)
            return names.count == 1 ? names[0] : "[" + names.joined(separator: ", ") + "]"
        }
    }
}
