import Glibc
import RunLoopKitPlatform

extension EVSource {
    /// What happened to a watched file, or to the entries of a watched directory.
    public struct FileChanges: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The bits: 1 created, 2 modified, 4 deleted, 8 moved, 16 attributes, 32 overflow.
        public let rawValue: UInt8
        /// Creates changes from their bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The file (or an entry) appeared (`IN_CREATE`; a file renamed onto a watched name
        /// that did not exist).
        public static let created = FileChanges(rawValue: 1)
        /// The contents changed (`IN_MODIFY`, `IN_CLOSE_WRITE`), or another file was renamed
        /// over the watched one: an editor's atomic save.
        public static let modified = FileChanges(rawValue: 2)
        /// The file, an entry, or the watched directory was deleted (`IN_DELETE`,
        /// `IN_DELETE_SELF`).
        public static let deleted = FileChanges(rawValue: 4)
        /// The file was renamed away from its path, or an entry renamed (`IN_MOVED_FROM`,
        /// `IN_MOVED_TO`, `IN_MOVE_SELF`).
        public static let moved = FileChanges(rawValue: 8)
        /// Permissions, owner, timestamps or links changed (`IN_ATTRIB`).
        public static let attributes = FileChanges(rawValue: 16)
        /// The kernel's queue of changes overflowed (`IN_Q_OVERFLOW`): changes were lost, to
        /// this source and to every other file source of its loop, and the names reported
        /// with it are not all that changed. Not a change of the file: look again at what the
        /// source watches (read the file; list the directory and compare with what you knew).
        /// It is reported whatever kinds the source asked for.
        public static let overflow = FileChanges(rawValue: 32)
        /// Every kind of change (``overflow``, which is not one, is reported regardless).
        public static let all: FileChanges = [.created, .modified, .deleted, .moved, .attributes]

        /// The kinds, such as `[created, modified]`.
        public var description: String {
            let names: [(FileChanges, String)] = [
                (.created, "created"), (.modified, "modified"), (.deleted, "deleted"), (.moved, "moved"),
                (.attributes, "attributes"), (.overflow, "overflow"),
            ]
            return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
        }
    }

    /// Creates a source that fires on the loop's thread after the file or directory at
    /// `path` changed, with ``fileChanges`` (and, for a directory, ``changedNames``) saying
    /// how.
    ///
    /// A file is watched through its directory, by name: a file written in place, replaced
    /// by a rename (an editor's atomic save: a temporary file renamed over the original,
    /// reported as ``FileChanges/modified``), deleted, or created again at the path is
    /// reported, and the watch goes on with whatever file the path names. A directory
    /// reports the changes of its entries. When the watched directory (a file's, or the
    /// watched one) is deleted or moved, the source reports it, then is invalidated.
    ///
    /// Changes that come faster than the loop reads them can overflow the kernel's queue
    /// (`fs.inotify.max_queued_events`): every file source of the loop then reports
    /// ``FileChanges/overflow``, whatever `changes` asked for, and must look again at what it
    /// watches: a file source reads its file, a directory source lists its directory
    /// (``changedNames`` is then incomplete) and compares with what it knew.
    ///
    /// With a `tolerance`, the first change starts a hold of that length, and the changes
    /// that arrive meanwhile are reported together when it ends: a burst of writes shorter
    /// than the tolerance is one callout. The callout runs in the sources phase of a pass,
    /// as every source's does.
    ///
    /// The watch starts when the source is added to a loop (on the adding thread) and lasts
    /// while the source is in one of its modes; the changes that come while another mode
    /// runs are reported when one of the source's modes runs. A loop's file sources share
    /// one inotify instance (`fs.inotify.max_user_instances`, 128 per user by default,
    /// limits the loops that watch files, not the files), and the sources of one directory
    /// (a directory's, and those of the files in it) one watch of it
    /// (`fs.inotify.max_user_watches`). When inotify refuses the instance or the watch, the
    /// add sets the source's ``error`` (naming `inotify_init1` or `inotify_add_watch`, and
    /// the limit that may be the reason), invalidates it and calls its handler once, as for
    /// a descriptor source whose descriptor was closed. After `fork()`, a loop used in the
    /// child watches through an instance of its own, its watches added again at its first
    /// use there: the child never takes the parent's changes (those made in between are
    /// the parent's alone). A source whose directory is gone then reports it deleted; one
    /// whose watch inotify refuses there (the parent's watches still count against
    /// `fs.inotify.max_user_watches`) gets the ``error``, as at an add.
    ///
    /// - Parameters:
    ///   - path: an absolute path to an existing file or directory.
    ///   - changes: the kinds of change that fire the source.
    ///   - tolerance: how long a callout may wait for more changes after the first.
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - handler: the callout, given the source, on the loop's thread.
    /// - Throws: ``EVRunLoop/Error`` naming `stat` when the path does not exist.
    /// - Precondition: `path` is absolute, `changes` is not empty, `tolerance` is not
    ///   negative.
    ///
    /// The corresponding facilities are libev's `ev_stat`, sd-event's
    /// `sd_event_add_inotify`, GLib's `GFileMonitor` and Dispatch's vnode source (which Linux
    /// lacks).
    public convenience init(
        watching path: String, for changes: FileChanges = .all, tolerance: Duration = .zero,
        label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        let call = "EVSource(watching: \"\(path)\")"
        require(path.hasPrefix("/"), "\(call): the path is not absolute")
        require(!changes.isEmpty, "\(call): changes is empty")
        require(tolerance >= .zero, "\(call): tolerance \(tolerance) is negative")
        let watch = try FileWatch(path: path, wanted: changes, tolerance: tolerance.nanoseconds, call: call)
        self.init(kind: .fileChanges(path), order: 0, label: label, state: .file(watch), readiness: .read,
                  handler: handler)
    }

    /// For a file source, what changed since the callout before this one (read it in the
    /// handler); empty for other kinds. Loop thread only.
    public var fileChanges: FileChanges { fileWatch?.delivered ?? [] }

    /// For a source watching a directory, the names of the entries that changed since the
    /// callout before this one, in the order they first changed; empty otherwise. Not all of
    /// them when ``fileChanges`` holds ``FileChanges/overflow``: list the directory then.
    /// Loop thread only.
    public var changedNames: [String] { fileWatch?.deliveredNames ?? [] }
}
