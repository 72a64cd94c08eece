#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Synchronization
import RunLoopKitPlatform

/// A loop's inotify instance, shared by all its file sources, and the table that hands each
/// event to the sources it is about.
///
/// One instance per loop, as libuv and sd-event keep one per loop (GLib one per process, read
/// on its worker thread): `fs.inotify.max_user_instances` (128 per user, shared by every
/// program of the user) then limits the loops that watch files, not the files, and each
/// loop reads its own instance on its own thread. The instance is opened at the loop's
/// first file source.
///
/// Sources watch a file through its directory (``FileWatch``), so the table is keyed by the
/// directory's watch descriptor: inotify gives the same descriptor for the same directory
/// (its inode), so each entry counts the sources it serves, and the watch is removed when
/// its last source leaves. Within an entry, the sources of the directory itself get every
/// event, a file's only those naming it.
///
/// A source is registered when it is added to the loop, on the adding thread, so that the
/// changes made after an add from another thread are the source's; hence the lock. The
/// events are read on the loop's thread, and the sources' ``FileWatch``es touched there only.
final class InotifyInstance: Sendable {
    /// The sources one directory's watch serves.
    private struct Entry {
        /// The path the watch was made with.
        let directory: String
        /// Sources watching the directory itself: every event of it is theirs.
        var wholeDirectory: [EVSource] = []
        /// Sources watching a file of it, by the file's name.
        var byName: [String: [EVSource]] = [:]
        var count = 0

        /// Every source of the entry.
        var sources: [EVSource] { wholeDirectory + byName.values.joined() }

        mutating func insert(_ source: EVSource, named name: String?) {
            if let name {
                byName[name, default: []].append(source)
            } else {
                wholeDirectory.append(source)
            }
            count += 1
        }

        mutating func remove(_ source: EVSource, named name: String?) {
            if let name {
                byName[name]?.removeAll { $0 === source }
                if byName[name]?.isEmpty == true { byName[name] = nil }
            } else {
                wholeDirectory.removeAll { $0 === source }
            }
            count -= 1
        }
    }

    private struct Table {
        /// The instance's descriptor; -1 until the first source needs it, and once closed.
        var descriptor: Int32 = -1
        var entries: [Int32: Entry] = [:]
        /// The watch descriptor each registered source is in the entry of.
        var watchOf: [ObjectIdentifier: Int32] = [:]
        /// Whether the loop ended: no source registers any more.
        var closed = false
        /// The process's fork count when ``descriptor`` was made: another count now means
        /// this is a forked child, whose descriptor is its parent's instance.
        var generation: UInt32 = 0
        /// Sources whose directory a forked child could not watch again, and why (the
        /// errno), for the loop to report (``adoptIfForked()``).
        var lost: [(source: EVSource, errno: Int32)] = []
    }
    /// Taken by the loop's thread and by threads that add file sources to the loop; a forked
    /// child whose copy a thread of the parent held at the fork refuses to take it
    /// (``ForkCheckedLock``).
    private let table = ForkCheckedLock(
        Table(), name: "the loop's file watches (its inotify table, which EVRunLoop.add of a file source takes)")
#if DEBUG
    /// Called in ``register(_:_:)`` while it holds the table's lock: a test holds the lock open
    /// to fork in it. Debug builds only.
    let registerHoldingTableHookForTests = Mutex<(@Sendable () -> Void)?>(nil)
#endif

    /// One inotify event: the watch, what happened, and the entry's name (nil: the watch's
    /// directory itself).
    private typealias Event = (wd: Int32, mask: UInt32, name: String?)

    /// Every inotify event a watch asks for.
    private static let mask = Inotify.mask

    deinit { self.close() }

    /// The instance's descriptor, for the loop's backend to watch; -1 while none is open.
    var descriptor: Int32 { table.withLock { $0.descriptor } }

    /// Closes the instance (the loop ended); its watches go with it.
    func close() {
        let fd = table.withLock { table in
            defer { table = Table(closed: true) }
            return table.descriptor
        }
        if fd >= 0 { Descriptors.close(fd) }
    }

    /// In a forked child, the first time it is called there (or after another call made it):
    /// the child's descriptor is its parent's instance (one open file description), whose
    /// events are the parent's and whose watches a removal here would remove for the parent
    /// too; so the child closes its copy, opens an instance of its own and adds every watch
    /// again, as libev's `ev_loop_fork` re-adds its `ev_stat`s. Returns the fork count the
    /// descriptor was made at (the loop watches the new descriptor when it changed) and the
    /// sources whose directory could not be watched again, with the errno.
    func adoptIfForked() -> (generation: UInt32, lost: [(source: EVSource, errno: Int32)]) {
        table.withLock { table in
            Self.adoptIfForked(&table)
            defer { table.lost = [] }
            return (table.generation, table.lost)
        }
    }

    private static func adoptIfForked(_ table: inout Table) {
        let now = ProcessForks.generation
        guard table.generation != now else { return }
        table.generation = now
        guard table.descriptor >= 0 else { return }
        Descriptors.close(table.descriptor)
        table.descriptor = Inotify.open()
        if table.descriptor < 0 {
            misuse("EVRunLoop: after fork(), the child cannot make its loop's inotify instance: inotify_init1 failed (errno \(SystemErrno.current))")
        }
        let old = table.entries
        (table.entries, table.watchOf) = ([:], [:])
        for entry in old.values {
            let wd = Inotify.addWatch(table.descriptor, entry.directory, mask: mask)
            guard wd >= 0 else {
                let code = SystemErrno.current
                table.lost += entry.sources.map { ($0, code) }
                continue
            }
            for source in entry.sources {
                table.watchOf[ObjectIdentifier(source)] = wd
                table.entries[wd, default: Entry(directory: entry.directory)]
                    .insert(source, named: source.fileWatch?.name)
            }
        }
    }

    /// Whether `source` is registered.
    func isRegistered(_ source: EVSource) -> Bool {
        table.withLock { $0.watchOf[ObjectIdentifier(source)] != nil }
    }

    /// Watches `watch`'s directory for `source` (a no-op if it is registered already),
    /// sharing the directory's watch with the sources already on it; opens the instance
    /// first if this is the loop's first file source. Any thread. Returns the error when
    /// inotify refuses.
    func register(_ source: EVSource, _ watch: FileWatch) -> EVRunLoop.Error? {
        table.withLock { table in
#if DEBUG
            if let hook = registerHoldingTableHookForTests.withLock({ $0 }) { hook() }
#endif
            guard !table.closed, table.watchOf[ObjectIdentifier(source)] == nil else { return nil }
            Self.adoptIfForked(&table)
            if table.descriptor < 0 {
                let fd = Inotify.open()
                guard fd >= 0 else {
                    let code = SystemErrno.current
                    let limits = code == EMFILE
                        ? ", limited by the process's descriptors (RLIMIT_NOFILE) and per user by "
                            + Self.limit("max_user_instances") + ","
                        : ""
                    return EVRunLoop.Error(call: "\(watch.call): inotify_init1" + limits, errno: code)
                }
                table.descriptor = fd
                table.generation = ProcessForks.generation
            }
            let wd = Inotify.addWatch(table.descriptor, watch.directory, mask: Self.mask)
            guard wd >= 0 else { return Self.refusal(of: watch, errno: SystemErrno.current) }
            table.watchOf[ObjectIdentifier(source)] = wd
            table.entries[wd, default: Entry(directory: watch.directory)].insert(source, named: watch.name)
            return nil
        }
    }

    /// The error of an `inotify_add_watch` of `watch`'s directory that failed with `code`,
    /// naming the limit that may be the reason.
    static func refusal(of watch: FileWatch, errno code: Int32) -> EVRunLoop.Error {
        let limits = code == ENOSPC ? ", limited per user by " + limit("max_user_watches") + "," : ""
        return EVRunLoop.Error(call: "\(watch.call): inotify_add_watch(\(watch.directory))" + limits, errno: code)
    }

    /// The per-user limit `fs.inotify.<name>` and its value, when it can be read.
    private static func limit(_ name: String) -> String {
        let text = (try? String(contentsOfFile: "/proc/sys/fs/inotify/\(name)", encoding: .utf8)) ?? ""
        guard let value = text.split(whereSeparator: \.isWhitespace).first else { return "fs.inotify.\(name)" }
        return "fs.inotify.\(name) = \(value)"
    }

    /// Lets go of `source`'s share of its directory's watch; the last source removes the
    /// watch. Loop thread.
    func unregister(_ source: EVSource, _ watch: FileWatch) {
        table.withLock { table in
            Self.adoptIfForked(&table)
            guard let wd = table.watchOf.removeValue(forKey: ObjectIdentifier(source)),
                  var entry = table.entries[wd] else { return }
            entry.remove(source, named: watch.name)
            if entry.count == 0 {
                table.entries[wd] = nil
                Inotify.removeWatch(table.descriptor, wd)
            } else {
                table.entries[wd] = entry
            }
        }
    }

    /// Reads every event queued and hands each to the sources it is about; `changed` is
    /// given each source that recorded a change it waits for (maybe more than once). Loop
    /// thread.
    func drain(_ changed: (EVSource) -> Void) {
        let fd = descriptor
        guard fd >= 0 else { return }
        withUnsafeTemporaryAllocation(byteCount: 65_536, alignment: 8) { buffer in
            while true {
                let count = Inotify.read(fd, into: buffer)
                guard count > 0 else { return }
                var events: [Event] = []
                var offset = 0
                while offset + 16 <= count {
                    let wd = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                    events.append((wd, mask, nameBytes.isEmpty ? nil : String(decoding: nameBytes, as: UTF8.self)))
                    offset += 16 + length
                }
                for (event, sources) in addressees(of: events) {
                    for source in sources {
                        guard let watch = source.fileWatch else { continue }
                        if event.mask & Inotify.overflow != 0 {
                            watch.recordOverflow()
                            changed(source)
                        } else if watch.handle(event.mask, entry: event.name) {
                            changed(source)
                        }
                    }
                }
            }
        }
    }

    /// The sources each event is about: every source for an overflow, else the sources of
    /// its watch it names. A watch the kernel dropped (`IN_IGNORED`: its directory is gone)
    /// leaves the table, its sources unregistered.
    private func addressees(of events: [Event]) -> [(Event, [EVSource])] {
        table.withLock { table in
            events.compactMap { event in
                if event.mask & Inotify.overflow != 0 {
                    return (event, table.entries.values.flatMap(\.sources))
                }
                guard let entry = table.entries[event.wd] else { return nil }  // a watch removed since
                if event.mask & Inotify.ignored != 0 {
                    table.entries[event.wd] = nil
                    for source in entry.sources { table.watchOf[ObjectIdentifier(source)] = nil }
                }
                let sources = event.name.map { entry.wholeDirectory + (entry.byName[$0] ?? []) } ?? entry.sources
                return (event, sources)
            }
        }
    }
}
