extension EVRunLoop {
    /// A runtime failure of the loop's operating-system calls.
    ///
    /// Programmer errors (running a loop from another thread, a NaN deadline, adding an
    /// invalidated observer) stop the program with a message instead; see each call.
    public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible {
        /// The call that failed, for example `"timerfd_create"` or `"ev_loop_new"`.
        public var call: String
        /// The `errno` it reported, or 0 when it reported none.
        public var errno: Int32

        /// Creates an error for `call` failing with `errno`.
        ///
        /// - Parameters:
        ///   - call: the call that failed, as the message should name it.
        ///   - errno: the C library's error number.
        public init(call: String, errno: Int32) {
            self.call = call
            self.errno = errno
        }

        public var description: String { "\(call) failed (errno \(errno))" }
    }
}
