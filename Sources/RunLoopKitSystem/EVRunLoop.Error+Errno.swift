#if SwiftSystem
// Built under the package trait SwiftSystem, which brings swift-system.
public import RunLoopKit
public import SystemPackage

/// The loop's errors as swift-system's `Errno`.
extension EVRunLoop.Error {
    /// The error number as swift-system's `Errno` (`Errno(rawValue: 0)` when the call
    /// reported none): the `Errno` form of `EVRunLoop.Error.errno`, to compare
    /// with `.badFileDescriptor`, `.noSuchProcess` and the rest by name.
    ///
    /// The corresponding C value is `errno`; swift-system's `Errno` wraps it the same way.
    public var systemErrno: Errno { Errno(rawValue: errno) }

    /// Creates an error for `call` failing with `errno`: the `Errno` form of
    /// `EVRunLoop.Error.init(call:errno:)`.
    ///
    /// - Parameters:
    ///   - call: the call that failed, as the message should name it.
    ///   - errno: the error, such as a thrown `Errno` a swift-system call reported.
    public init(call: String, errno: Errno) {
        self.init(call: call, errno: errno.rawValue)
    }
}
#endif
