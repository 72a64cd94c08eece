internal import CRunLoopKitGLib
import Glibc
import RunLoopKit

/// GLib's descriptors, watched for the hosting loop: after each query, every descriptor
/// GLib waits on is in an epoll set of the hosting's own, for exactly GLib's conditions
/// (`G_IO_IN`, `G_IO_OUT`, `G_IO_PRI`; `G_IO_ERR` and `G_IO_HUP` are always reported), and
/// that set's descriptor is one descriptor source of the hosted modes, so that the loop's
/// wait ends when one is ready. The source only wakes the loop; GLib reads the readiness
/// itself in its check. Loop thread only.
///
/// libev's watchers know reading and writing only: a `G_IO_PRI` watch read as reading spins
/// on a file that is always readable (`/proc/self/mountinfo`), and a watch of `G_IO_ERR` or
/// `G_IO_HUP` alone would be no watch at all. epoll takes poll(2)'s conditions as they are.
///
/// Every query re-registers every descriptor (`EPOLL_CTL_MOD`), as GLib's own poll reads
/// its whole set each iteration: epoll keys a registration by the open file and the number,
/// so the call fails when the number now names another file — a descriptor closed and its
/// number reused between two queries, which no `fstat` can tell for eventfds, timerfds,
/// signalfds, inotify and epoll descriptors (they share one anonymous inode). Then the set
/// is made anew: the old file's registration, kept by the kernel while another descriptor
/// (another process's) still names that file, must not wake the loop.
final class GLibWatches {

    private let modes: [EVRunLoop.Mode]
    private let label: String
    /// The epoll set of GLib's descriptors (`epoll_create1`), closed by ``removeAll()``.
    private var epoll: Int32 = -1
    /// The loop's source on ``epoll``.
    private var source: EVSource?
    /// The descriptors in ``epoll`` and their conditions.
    private var registrations: [Int32: UInt32] = [:]
    /// The last query's descriptors and their epoll conditions; reused from query to query.
    private var wanted: [Int32: UInt32] = [:]

    init(modes: [EVRunLoop.Mode], label: String) {
        self.modes = modes
        self.label = label
    }

    /// Watches exactly the descriptors of `context`'s last query. Returns false when the loop
    /// must not sleep: a descriptor is closed (GLib's poll reports `G_IO_NVAL` at once), or
    /// is a regular file waited on for reading or writing (poll(2) reports it ready at once;
    /// epoll refuses it).
    func update(from context: GLibContext, on loop: EVRunLoop) -> Bool {
        wanted.removeAll(keepingCapacity: true)
        for index in 0..<context.count {
            let (fd, events) = context.descriptor(at: index)
            guard fd >= 0 else { continue }  // GLib skips negative descriptors too
            wanted[fd, default: 0] |= Self.epollEvents(of: events)
        }
        guard !wanted.isEmpty || !registrations.isEmpty else { return true }
        guard openSet(on: loop) else { return false }
        var mayWait = true
        var reused = false
        for (fd, events) in wanted {
            if registrations[fd] != nil {
                var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
                if epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0 {
                    registrations[fd] = events
                    continue
                }
                // The number names another file now (ENOENT), or none (EBADF).
                registrations[fd] = nil
                reused = true
            }
            if !add(fd, events) { mayWait = false }
        }
        if reused {
            removeAll()
            return update(from: context, on: loop)
        }
        if registrations.count > wanted.count {
            for fd in registrations.keys where wanted[fd] == nil {
                var unused = epoll_event()
                _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &unused)
                registrations[fd] = nil
            }
        }
        return mayWait
    }

    /// Registers `fd` for `events`; false when the loop must not sleep on it.
    private func add(_ fd: Int32, _ events: UInt32) -> Bool {
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        if epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 {
            registrations[fd] = events
            return true
        }
        // A regular file or directory (EPERM): poll(2) reports reading and writing ready at
        // once, and nothing else ever.
        return errno == EPERM && events & (EPOLLIN.rawValue | EPOLLOUT.rawValue) == 0
    }

    /// Makes the epoll set and its source in the hosted modes, once; false when the kernel
    /// refuses (no descriptor left): the loop then must not sleep.
    private func openSet(on loop: EVRunLoop) -> Bool {
        guard source == nil else { return true }
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { return false }
        guard let source = try? EVSource(fileDescriptor: epoll, for: .read, label: "\(label) descriptors", handler: { _ in })
        else {
            close(epoll)
            epoll = -1
            return false
        }
        self.source = source
        for mode in modes { loop.add(source, forMode: mode) }
        return true
    }

    /// Stops every watch and closes the epoll set.
    func removeAll() {
        // The source first: libev must not watch a closed descriptor.
        source?.invalidate()
        source = nil
        registrations.removeAll()
        if epoll >= 0 { close(epoll) }
        epoll = -1
    }

    /// poll(2)'s conditions (GLib's `G_IO_IN`, `G_IO_OUT`, `G_IO_PRI`) as epoll's; `G_IO_ERR`
    /// and `G_IO_HUP` need no bit: epoll always reports them.
    private static func epollEvents(of events: Int16) -> UInt32 {
        var result: UInt32 = 0
        if events & Int16(POLLIN) != 0 { result |= EPOLLIN.rawValue }
        if events & Int16(POLLOUT) != 0 { result |= EPOLLOUT.rawValue }
        if events & Int16(POLLPRI) != 0 { result |= EPOLLPRI.rawValue }
        return result
    }
}
