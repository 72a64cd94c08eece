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
/// A query whose descriptors and conditions are those of the last one, record for record,
/// keeps the set as it is; the set is checked again (every descriptor re-registered with
/// `EPOLL_CTL_MOD`, as GLib's own poll reads its whole set each iteration) when they differ,
/// and after any check that found a descriptor ready (``GLibContext/sawReadiness``): GLib
/// signals its wakeup descriptor, one of the set, whenever its poll set changes, so a number
/// closed and reused between two queries that look alike is seen at the next query. epoll
/// keys a registration by the open file and the number, so the call fails when the number
/// now names another file, which no `fstat` can tell for eventfds, timerfds, signalfds,
/// inotify and epoll descriptors (they share one anonymous inode). Then the set is made anew:
/// the old file's registration, kept by the kernel while another descriptor (another
/// process's) still names that file, must not wake the loop.
///
/// While the set holds exactly the last query's descriptors, its `epoll_wait` with a zero
/// timeout is the check's reading of their readiness (``fill(_:query:afterWait:)``), in place
/// of GLib's poll over every descriptor; and after a wait that did not find the set readable,
/// with the set unchanged since the wait's last poll before it, none is ready and there is
/// nothing to read.
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
    /// The query the set was last checked against: each record's descriptor and conditions.
    private var synced: [UInt64] = []
    /// Each descriptor's record in ``synced``; nil when one descriptor has two records.
    private var slots: [Int32: Int]? = [:]
    /// The query (``GLibContext/queries``) whose descriptors are all in the set, with nothing
    /// else: only then does ``fill(_:query:afterWait:)`` read readiness from the set.
    private var syncedQuery: Int?
    /// Whether the last ``update(from:on:)`` left the set as it was: then the loop's polls
    /// since the last change, the fairness poll before `beforeWaiting` among them, saw the
    /// set's readiness for exactly these registrations.
    private var keptAtLastUpdate = false
    /// `epoll_wait`'s buffer.
    private var events: [epoll_event] = []

    init(modes: [EVRunLoop.Mode], label: String) {
        self.modes = modes
        self.label = label
    }

    /// Watches exactly the descriptors of `context`'s last query. Returns false when the loop
    /// must not sleep: a descriptor is closed (GLib's poll reports `G_IO_NVAL` at once), or
    /// is a regular file waited on for reading or writing (poll(2) reports it ready at once;
    /// epoll refuses it).
    func update(from context: GLibContext, on loop: EVRunLoop) -> Bool {
        if syncedQuery != nil, !context.sawReadiness, matches(context) {
            syncedQuery = context.queries
            keptAtLastUpdate = true
            return true
        }
        keptAtLastUpdate = false
        context.sawReadiness = false
        let mayWait = register(from: context, on: loop)
        synced.removeAll(keepingCapacity: true)
        var slots: [Int32: Int]? = [:]
        for index in 0..<context.count {
            let (fd, events) = context.descriptor(at: index)
            synced.append(Self.packed(fd, events))
            if slots?.updateValue(index, forKey: fd) != nil { slots = nil }
        }
        self.slots = slots
        syncedQuery = mayWait ? context.queries : nil
        return mayWait
    }

    /// Whether `context`'s last query has the descriptors and conditions of ``synced``.
    private func matches(_ context: GLibContext) -> Bool {
        guard context.count == synced.count else { return false }
        for index in 0..<context.count {
            let (fd, events) = context.descriptor(at: index)
            if synced[index] != Self.packed(fd, events) { return false }
        }
        return true
    }

    private static func packed(_ fd: Int32, _ events: Int16) -> UInt64 {
        UInt64(UInt32(bitPattern: fd)) << 16 | UInt64(UInt16(bitPattern: events))
    }

    /// Fills `records` (query `query`'s, `revents` cleared) with their readiness from the
    /// set's `epoll_wait` with a zero timeout, and returns how many are ready; nil when the
    /// set does not hold exactly that query's descriptors (the caller then polls them).
    /// epoll reports poll(2)'s bits, with `EPOLLERR` and `EPOLLHUP` always.
    ///
    /// `afterWait`: the loop waited (or polled) since the query, in a hosted mode. When the
    /// set was kept as it was at that query and the loop's source on it was not reported
    /// ready, no descriptor was ready at the wait's end, and none is read: GLib's own poll
    /// would have returned before a later readiness, which the next iteration sees (the set
    /// stays readable, so the loop's next wait ends at once). libev hands out at most its
    /// event array's length of ready descriptors per wait (64, growing when filled): with
    /// more of the loop's descriptors ready at once, the set's may come a pass later.
    func fill(_ records: UnsafeMutableBufferPointer<GPollFD>, query: Int, afterWait: Bool) -> Int? {
        guard syncedQuery == query, epoll >= 0, records.count == synced.count else { return nil }
        if afterWait, keptAtLastUpdate, let source, !source.isReportedReady { return 0 }
        if events.count < records.count { events = Array(repeating: epoll_event(), count: records.count) }
        let found = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), 0) }
        guard found >= 0 else { return nil }
        var ready = 0
        for index in 0..<Int(found) {
            let fd = events[index].data.fd
            let reported = UInt16(truncatingIfNeeded: events[index].events) & UInt16(POLLIN | POLLPRI | POLLOUT | POLLERR | POLLHUP)
            func mark(_ slot: Int) {
                let revents = reported & (UInt16(records[slot].events) | UInt16(POLLERR | POLLHUP))
                if revents != 0 {
                    records[slot].revents = revents
                    ready += 1
                }
            }
            if let slots {
                if let slot = slots[fd] { mark(slot) }
            } else {
                for slot in records.indices where records[slot].fd == fd { mark(slot) }
            }
        }
        return ready
    }

    /// Registers every descriptor of `context`'s last query, checking those registered
    /// already (`EPOLL_CTL_MOD`); false when the loop must not sleep.
    private func register(from context: GLibContext, on loop: EVRunLoop) -> Bool {
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
            return register(from: context, on: loop)
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
        syncedQuery = nil
        keptAtLastUpdate = false
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
