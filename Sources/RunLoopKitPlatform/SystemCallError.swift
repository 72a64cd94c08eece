/// A system call of this layer that failed: the call, as a message names it, and its `errno`.
/// RunLoopKit hands it on as an `EVRunLoop.Error` with the same call and number (the
/// platform layer sits below the public API and cannot name it).
///
/// The corresponding swift-system type is `Errno`; GLib's is a `GError` in `G_IO_ERROR`.
package struct SystemCallError: Error, CustomStringConvertible {
    /// The call that failed, for example `"EVSource(childProcess: 42): pidfd_open"`.
    package var call: String
    /// The `errno` it reported.
    package var errno: Int32

    /// The failure of `call` with `errno`.
    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// As `EVRunLoop.Error` describes itself: `"<call> failed (errno <n>)"`.
    package var description: String { "\(call) failed (errno \(errno))" }
}
