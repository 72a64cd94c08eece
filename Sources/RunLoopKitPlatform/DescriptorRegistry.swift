internal import CRunLoopKitLibev
import Glibc

/// Tells whether a descriptor number still names the open file a loop first saw there,
/// for every kind of file epoll accepts: pipes, sockets, and the anonymous-inode kinds
/// (eventfd, timerfd, signalfd, inotify, epoll, pidfd) that share one inode, so that
/// `fstat` cannot tell one from another.
///
/// It keeps an epoll instance of its own, in which each descriptor it is shown is
/// registered (for no events). The kernel keys a registration on the pair (open file,
/// number) and drops it when that open file ends, so adding the number again answers the
/// question: `EEXIST` if the file registered under it is the one there now, success if
/// the number names a file not seen under it. A count per number of the files seen there
/// (the generation) tells apart two files that were each registered under it. The
/// registrations hold no reference to a file: a closed file is not kept open. Files epoll
/// refuses (regular files, directories; `EPERM`) are left to `fstat`'s device and inode.
///
/// The corresponding libev mechanism is `ev_epoll.c`'s generation counter per descriptor,
/// which tells its own stale events from current ones; GLib, sd-event and libuv have no
/// such check (they require the watch to end before the close).
///
/// Used on the loop's thread only: one per loop (in its ``WatchTable``).
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the module above (ARCHITECTURE.md, "Layers").
@usableFromInline package final class DescriptorRegistry {
    /// What the registry answered for a descriptor.
    @usableFromInline package enum Entry: Equatable {
        /// Not shown to the registry yet.
        case unregistered
        /// Registered: the generation of its number that it is.
        case generation(UInt64)
        /// epoll refuses the kind of file (a regular file, a directory; an epoll instance
        /// nested too deep): `fstat` decides.
        case refused

        /// Whether both are the same answer. Written out and inlinable: the synthesized one
        /// is called through the protocol's witness from the module above.
        @inlinable
        package static func == (lhs: Entry, rhs: Entry) -> Bool {
            switch (lhs, rhs) {
            case (.unregistered, .unregistered), (.refused, .refused): true
            case let (.generation(left), .generation(right)): left == right
            default: false
            }
        }
    }

    /// Whether the number still names the registered file.
    package enum Match {
        case same
        case closed
        case reused
    }

    // `generations` skips Swift's dynamic exclusivity checks (read before every descriptor
    // callout): it is used on the loop's thread only, and no access spans a call out of this
    // type.
    /// The epoll instance, made at the first registration; -1 before, or if it could not be.
    private var epoll: Int32 = -1
    /// Per descriptor number, how many files were registered under it.
    @exclusivity(unchecked) private var generations: [UInt64] = []

    /// A registry with no descriptor registered; its epoll instance is made at the first.
    package init() {}

    deinit {
        if epoll >= 0 { close(epoll) }
    }

    /// Registers the file that `fd` names now. Throws when the registry cannot make its
    /// epoll instance (the process is out of descriptors) or epoll is out of memory or
    /// watches: the file could then not be told from one that later takes its number, so it
    /// must not be watched.
    package func register(_ fd: Int32) throws(SystemCallError) -> Entry {
        if epoll < 0 {
            epoll = clibev_epoll_create()
            if epoll < 0 {
                throw SystemCallError(call: "EVRunLoop.add(_:forMode:): epoll_create1 (the loop's descriptor registry)", errno: errno)
            }
        }
        switch add(fd) {
        case 0, EEXIST: return .generation(generations[Int(fd)])
        case let code where code == ENOMEM || code == ENOSPC:  // out of memory, fs.epoll.max_user_watches
            throw SystemCallError(call: "EVRunLoop.add(_:forMode:): epoll_ctl(\(fd)) (the loop's descriptor registry)", errno: code)
        default: return .refused  // the kind of file (a regular file, an epoll too deeply nested)
        }
    }

    /// Whether `fd` still names the file registered as `generation`: one `epoll_ctl` call.
    package func check(_ fd: Int32, generation: UInt64) -> Match {
        switch add(fd) {
        case EEXIST: generations[Int(fd)] == generation ? .same : .reused
        case EBADF: .closed
        default: .reused  // added: a file not registered under this number; refused: not the file
        }
    }

    /// Adds `fd` to the epoll instance; a file new under its number gets the next
    /// generation. Returns 0 or the errno.
    private func add(_ fd: Int32) -> Int32 {
        let index = Int(fd)
        if index >= generations.count {
            // Doubled, not to the number: new numbers mostly come one above the last, and an
            // append per add was a call per add.
            generations.append(contentsOf: repeatElement(0, count: max(index + 1, 2 * generations.count) - generations.count))
        }
        guard clibev_epoll_add(epoll, fd, 0) != 0 else {
            generations[index] &+= 1
            return 0
        }
        return Glibc.errno
    }
}
