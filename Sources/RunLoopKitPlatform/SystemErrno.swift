import Glibc

/// The C library's `errno`, the platform's part: read right after the call that failed
/// (a system call of this layer, or libev's, which sets it too).
///
/// The corresponding swift-system type is `Errno` (its `current`).
package enum SystemErrno {
    /// The calling thread's `errno` now.
    package static var current: Int32 { Glibc.errno }
}
