#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// The inotify side of a file source (``EVSource/init(watching:for:tolerance:label:handler:)``):
/// its inotify instance, what arrived since the last callout, and the tolerance's hold.
///
/// A file is watched through its directory, by name: an editor's atomic save (a temporary
/// file renamed over the original) is then a change of the watched name, and the watch
/// follows the new file, where a watch of the file's inode would stay with the old one. A
/// directory is watched itself, its entries' changes reported with their names.
///
/// Loop thread only, once the source is added (its ``EVSource`` says why that is safe).
final class FileWatch {
    /// The inotify instance: the descriptor the loop watches for the source.
    let descriptor: Int32
    /// The directory's watch in that instance.
    private let watch: Int32
    /// The watched file's name in its directory; nil when the path is a directory.
    private let name: String?
    private let wanted: EVSource.FileChanges
    /// How long a callout may wait for more changes after the first (ns); 0: at once.
    private let tolerance: Int64
    /// Whether the watched file exists, as far as the events told.
    private var exists = true
    private var pending: EVSource.FileChanges = []
    private var pendingNames: [String] = []
    /// The one-shot timer ending the tolerance of the changes pending, while one runs.
    private var hold: EVTimer?
    private var holdEnded = false
    /// Whether the watch is gone (its directory was removed or moved): the source reports
    /// it and is invalidated.
    private(set) var ended = false
    /// What the last callout reported.
    private(set) var delivered: EVSource.FileChanges = []
    private(set) var deliveredNames: [String] = []
    /// Where ``drain()`` reads inotify's events, kept for the source's life.
    private var buffer = [UInt8](repeating: 0, count: 4096)

    /// Every inotify event a watch asks for.
    private static let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB
        | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Opens an inotify instance watching `path` (absolute; a file or a directory that exists).
    init(path: String, wanted: EVSource.FileChanges, tolerance: Int64, call: String) throws(EVRunLoop.Error) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw EVRunLoop.Error(call: "\(call): stat", errno: errno) }
        let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
        let directory: String
        if isDirectory {
            directory = path
            name = nil
        } else {
            let slash = path.lastIndex(of: "/")!
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
            name = String(path[path.index(after: slash)...])
        }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            let code = errno
            throw EVRunLoop.Error(call: "\(call): inotify_init1" + Self.limit(code == EMFILE, "max_user_instances"), errno: code)
        }
        let watch = inotify_add_watch(fd, directory, Self.mask)
        guard watch >= 0 else {
            let code = errno
            close(fd)
            throw EVRunLoop.Error(call: "\(call): inotify_add_watch(\(directory))" + Self.limit(code == ENOSPC, "max_user_watches"),
                                  errno: code)
        }
        descriptor = fd
        self.watch = watch
        self.wanted = wanted
        self.tolerance = tolerance
    }

    /// The words naming inotify's per-user limit `name` and its value, when `reached`.
    private static func limit(_ reached: Bool, _ name: String) -> String {
        guard reached else { return "" }
        let text = (try? String(contentsOfFile: "/proc/sys/fs/inotify/\(name)", encoding: .utf8)) ?? ""
        let value = text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? "?"
        return ": the per-user limit fs.inotify.\(name) = \(value) is reached"
    }

    /// Reads what inotify queued and decides whether the source's handler runs now: when
    /// changes it waits for arrived, at once or (with a tolerance) once the hold that the
    /// first of them started has ended. `startHold` schedules that end.
    func takeDelivery(startHold: (Int64) -> EVTimer) -> Bool {
        drain()
        guard !pending.isEmpty else { return false }
        if tolerance > 0 && !ended && !holdEnded {
            if hold == nil { hold = startHold(tolerance) }
            return false
        }
        hold?.invalidate()
        hold = nil
        holdEnded = false
        (delivered, deliveredNames) = (pending, pendingNames)
        (pending, pendingNames) = ([], [])
        return true
    }

    /// The hold's timer fired: the changes pending are delivered at the source's next fire.
    func endHold() { holdEnded = true }

    /// Stops the hold's timer (the source was invalidated).
    func cancelHold() {
        hold?.invalidate()
        hold = nil
    }

    private func drain() {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + 16 <= count {
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = bytes[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                    handle(mask, name: nameBytes.isEmpty ? nil : String(decoding: nameBytes, as: UTF8.self))
                    offset += 16 + length
                }
            }
        }
    }

    /// One inotify event (`name`: the entry it is about, nil for the directory itself).
    private func handle(_ mask: UInt32, name entry: String?) {
        func has(_ bits: Int32) -> Bool { mask & UInt32(bits) != 0 }
        if has(IN_Q_OVERFLOW) {  // events were lost: anything may have happened
            record(wanted, entry: nil)
            return
        }
        if entry == nil {  // the directory itself
            if has(IN_DELETE_SELF) || has(IN_IGNORED) { record(.deleted, entry: nil) }
            if has(IN_MOVE_SELF) { record(.moved, entry: nil) }
            if has(IN_DELETE_SELF | IN_IGNORED | IN_MOVE_SELF) { ended = true }
            if name == nil, has(IN_ATTRIB) { record(.attributes, entry: nil) }
            return
        }
        if let name {
            guard entry == name else { return }
            if has(IN_CREATE | IN_MOVED_TO) {
                // A file renamed over the watched one (an atomic save) changes the watched file.
                record(exists ? .modified : .created, entry: nil)
                exists = true
            }
            if has(IN_MODIFY | IN_CLOSE_WRITE) { record(.modified, entry: nil) }
            if has(IN_ATTRIB) { record(.attributes, entry: nil) }
            if has(IN_DELETE) { record(.deleted, entry: nil) }
            if has(IN_MOVED_FROM) { record(.moved, entry: nil) }
            if has(IN_DELETE | IN_MOVED_FROM) { exists = false }
            return
        }
        if has(IN_CREATE) { record(.created, entry: entry) }
        if has(IN_MODIFY | IN_CLOSE_WRITE) { record(.modified, entry: entry) }
        if has(IN_ATTRIB) { record(.attributes, entry: entry) }
        if has(IN_DELETE) { record(.deleted, entry: entry) }
        if has(IN_MOVED_FROM | IN_MOVED_TO) { record(.moved, entry: entry) }
    }

    private func record(_ changes: EVSource.FileChanges, entry: String?) {
        let kept = changes.intersection(wanted)
        guard !kept.isEmpty else { return }
        pending.formUnion(kept)
        if let entry, !pendingNames.contains(entry) { pendingNames.append(entry) }
    }
}
