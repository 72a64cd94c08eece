extension EVRunLoop {
    /// The name of a run loop mode: the set of timers, sources and observers a run watches.
    ///
    /// A mode is created the first time something is added to it or it is run. Running a
    /// mode that holds no timers, sources or blocks returns ``RunResult/finished`` at once.
    ///
    /// The corresponding CFRunLoop type is `CFRunLoopMode` (`RunLoop.Mode` in Foundation).
    public struct Mode: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
        ExpressibleByStringLiteral
    {
        /// The mode's name.
        public let rawValue: String

        /// Creates a mode with the given name.
        ///
        /// - Parameter rawValue: the mode's name.
        @inlinable public init(rawValue: String) { self.rawValue = rawValue }

        /// Creates a mode with the given name, for example `Mode("tracking")`.
        ///
        /// - Parameter name: the mode's name; modes with equal names are the same mode.
        public init(_ name: String) { self.rawValue = name }

        /// Creates a mode from a string literal: `let tracking: EVRunLoop.Mode = "tracking"`.
        ///
        /// - Parameter name: the mode's name.
        public init(stringLiteral name: String) { self.rawValue = name }

        // A literal built where it is used (inlinable), not a stored global: the caller
        // then neither calls the global's accessor nor retains and releases its string.
        /// The mode that ``EVRunLoop/run()`` uses and that starts out as a common mode.
        ///
        /// The corresponding CFRunLoop constant is `kCFRunLoopDefaultMode`.
        @inlinable public static var `default`: Mode { Mode(rawValue: "kCFRunLoopDefaultMode") }

        /// The pseudo-mode that stands for every mode in the loop's common set.
        ///
        /// Adding an item to `.common` adds it to each common mode, now and to any mode made
        /// common later with ``EVRunLoop/addCommonMode(_:)``. Running `.common` itself is a
        /// programmer error, as in CF.
        ///
        /// The corresponding CFRunLoop constant is `kCFRunLoopCommonModes`.
        @inlinable public static var common: Mode { Mode(rawValue: "kCFRunLoopCommonModes") }

        public var description: String { rawValue }
    }
}
