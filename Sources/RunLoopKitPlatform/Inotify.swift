import Glibc

/// inotify, the platform's part: an instance, its watches, and reading its events. Errors
/// are left in ``SystemErrno/current``, for the caller to name.
///
/// The corresponding libev watcher is `ev_stat` (which polls `stat()` instead); GLib's
/// `GFileMonitor` and libuv's `uv_fs_event` use inotify the same way.
package enum Inotify {
    /// Every event a file source's directory watch asks for.
    package static let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB
        | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    /// The event bit: events were lost (the queue overflowed).
    package static let overflow = UInt32(IN_Q_OVERFLOW)
    /// The event bit: the kernel dropped the watch (its directory is gone).
    package static let ignored = UInt32(IN_IGNORED)

    /// A new non-blocking, close-on-exec instance's descriptor, or -1.
    package static func open() -> Int32 { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }

    /// Watches `directory` on the instance `fd` for `mask`; its watch descriptor (the same
    /// for the same directory), or -1.
    package static func addWatch(_ fd: Int32, _ directory: String, mask: UInt32) -> Int32 {
        inotify_add_watch(fd, directory, mask)
    }

    /// Removes the watch `wd` from the instance `fd`.
    package static func removeWatch(_ fd: Int32, _ wd: Int32) { _ = inotify_rm_watch(fd, wd) }

    /// Reads queued events into `buffer`: the bytes read, 0 or -1 when none are queued.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        Glibc.read(fd, buffer.baseAddress, buffer.count)
    }
}
