import Glibc
import RunLoopKitPlatform

/// A file source's side of inotify (``EVSource/init(watching:for:tolerance:label:handler:)``):
/// the directory it is watched through, the changes that arrived since its last callout, and
/// the tolerance's hold. The loop's ``InotifyInstance`` hands it the events of its directory.
///
/// A file is watched through its directory, by name: an editor's atomic save (a temporary
/// file renamed over the original) is then a change of the watched name, and the watch
/// follows the new file, where a watch of the file's inode would stay with the old one. A
/// directory is watched itself, its entries' changes reported with their names.
///
/// Loop thread only, once the source is added (its ``EVSource`` says why that is safe).
final class FileWatch {
    /// The directory whose inotify watch serves the source: the path itself for a directory.
    let directory: String
    /// The watched file's name in its directory; nil when the path is a directory.
    let name: String?
    /// The source's initializer, as its errors name it.
    let call: String
    private let wanted: EVSource.FileChanges
    /// How long a callout may wait for more changes after the first (ns); 0: at once.
    private let tolerance: Int64
    /// Whether the loop watches its inotify instance on this source's behalf (a mode holding
    /// the source is the armed one).
    var isArmed = false
    /// Whether the watched file exists, as far as the events told.
    private var exists = true
    private var pending: EVSource.FileChanges = []
    private var pendingNames: [String] = []
    private var pendingNameSet: Set<String> = []
    /// The one-shot timer ending the tolerance of the changes pending, while one runs.
    private var hold: EVTimer?
    private var holdEnded = false
    /// Whether the watch is gone (its directory was removed or moved): the source reports
    /// it and is invalidated.
    private(set) var ended = false
    /// What the last callout reported.
    private(set) var delivered: EVSource.FileChanges = []
    private(set) var deliveredNames: [String] = []

    /// Describes the watch of `path` (absolute; a file or a directory that exists); the
    /// loop's inotify instance watches it once the source is added to the loop.
    init(path: String, wanted: EVSource.FileChanges, tolerance: Int64, call: String) throws(EVRunLoop.Error) {
        if try EVRunLoop.Error.translating({ () throws(SystemCallError) in try Descriptors.isDirectory(path, call: call) }) {
            directory = path
            name = nil
        } else {
            let slash = path.lastIndex(of: "/")!
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
            name = String(path[path.index(after: slash)...])
        }
        self.wanted = wanted
        self.tolerance = tolerance
        self.call = call
    }

    /// Decides whether the source's handler runs now, for the changes recorded: when changes
    /// it waits for arrived, at once or (with a tolerance) once the hold that the first of
    /// them started has ended. `startHold` schedules that end.
    func takeDelivery(startHold: (Int64) -> EVTimer) -> Bool {
        guard !pending.isEmpty else { return false }
        if tolerance > 0 && !ended && !holdEnded {
            if hold == nil { hold = startHold(tolerance) }
            return false
        }
        hold?.invalidate()
        hold = nil
        holdEnded = false
        (delivered, deliveredNames) = (pending, pendingNames)
        (pending, pendingNames, pendingNameSet) = ([], [], [])
        return true
    }

    /// The hold's timer fired: the changes pending are delivered at the source's next fire.
    func endHold() { holdEnded = true }

    /// Stops the hold's timer (the source was invalidated).
    func cancelHold() {
        hold?.invalidate()
        hold = nil
    }

    /// The instance's queue overflowed: changes were lost, whatever kinds they were.
    func recordOverflow() { pending.insert(.overflow) }

    /// The watch could not be made again (after fork(), in the child): the directory is gone
    /// as far as the source can tell.
    func recordLost() {
        record(.deleted, entry: nil)
        ended = true
    }

    /// One inotify event of the directory (`entry`: the entry it is about, nil for the
    /// directory itself). Returns whether it recorded a change the source waits for, or
    /// ended the watch.
    func handle(_ mask: UInt32, entry: String?) -> Bool {
        func has(_ bits: Int32) -> Bool { mask & UInt32(bits) != 0 }
        let (before, wasEnded) = (pending, ended)
        if entry == nil {  // the directory itself
            if has(IN_DELETE_SELF) || has(IN_IGNORED) { record(.deleted, entry: nil) }
            if has(IN_MOVE_SELF) { record(.moved, entry: nil) }
            if has(IN_DELETE_SELF | IN_IGNORED | IN_MOVE_SELF) { ended = true }
            if name == nil, has(IN_ATTRIB) { record(.attributes, entry: nil) }
        } else if let name {
            guard entry == name else { return false }
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
        } else {
            if has(IN_CREATE) { record(.created, entry: entry) }
            if has(IN_MODIFY | IN_CLOSE_WRITE) { record(.modified, entry: entry) }
            if has(IN_ATTRIB) { record(.attributes, entry: entry) }
            if has(IN_DELETE) { record(.deleted, entry: entry) }
            if has(IN_MOVED_FROM | IN_MOVED_TO) { record(.moved, entry: entry) }
        }
        return pending != before || ended != wasEnded
    }

    private func record(_ changes: EVSource.FileChanges, entry: String?) {
        let kept = changes.intersection(wanted)
        guard !kept.isEmpty else { return }
        pending.formUnion(kept)
        if let entry, pendingNameSet.insert(entry).inserted { pendingNames.append(entry) }
    }
}
