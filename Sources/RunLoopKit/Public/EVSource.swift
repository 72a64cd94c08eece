import Glibc
import Synchronization
import RunLoopKitPlatform

/// An input source: a manual event, a readable or writable file descriptor, a POSIX signal,
/// a file's changes or a child process's exit, whose handler runs in the sources phase of a
/// run of one of its modes; or idle work (``idle(order:label:handler:)``), run where a pass
/// would otherwise wait.
///
/// - Manual: ``signal()`` marks it, ``EVRunLoop/wakeUp()`` makes a sleeping loop notice it
///   (CF's version-0 source: `CFRunLoopSourceSignal` then `CFRunLoopWakeUp`). Signalled
///   manual sources fire in ascending ``order`` before the loop waits.
/// - File descriptor: fires after a wait in which the descriptor became ready; readiness is
///   level-triggered, so a handler that does not drain the descriptor is called again.
///   Readiness is only watched while a mode holding the source runs. Invalidate the source
///   before closing its descriptor (or let the source close it: `closesDescriptor`). A
///   descriptor found closed, or closed and its number reused by another file of any kind
///   (anonymous-inode kinds included: eventfd, timerfd, signalfd, inotify, epoll, pidfd),
///   when the loop starts watching it or is about to call the handler, is never handed to
///   libev nor called for: the source is invalidated and its handler called once with
///   ``error`` set. So is a watched source whose descriptor was closed when another source
///   of the loop starts watching the file that took its number. What the kernel cannot
///   tell apart (a regular file reopened at its number; a close by another thread during
///   the callout) is listed in the DescriptorAndSignalSources article;
///   ``checksInvalidateBeforeClose`` makes the rule checkable.
/// - Signal: the handler runs on the loop's thread after the signal arrived, never inside
///   the signal handler. The signal is caught from ``EVRunLoop/add(_:forMode:)-(EVSource,_)``
///   until ``invalidate()``, whichever mode runs, and delivered when a mode holding it runs.
///   Signals that arrive faster than the loop serves them coalesce: one callout may stand
///   for several signals (the kernel itself keeps at most one pending instance of a
///   standard signal). Every loop with a source for a signal gets each arrival: sources on
///   several loops (two libraries in one program that both want `SIGTERM`) each fire.
/// - Child process: fires once, after the child exited, with ``childExit`` set; the source
///   has reaped the child (no zombie is left) and is invalid by then. It waits for its own
///   child only, never another's. See ``init(childProcess:label:handler:)``.
///
/// The corresponding CFRunLoop type is `CFRunLoopSource` (version 0 for manual sources;
/// CFFileDescriptor and dispatch signal sources for the others; CF has no process source,
/// libev's `ev_child`, sd-event's `sd_event_add_child_pidfd` and GLib's `g_child_watch_add`
/// are the counterparts of a child source).
public final class EVSource: @unchecked Sendable {
    // Safe to share: `kind`, `order`, `label` and `handler` never change; `atomicState` and
    // `link` (validity and loop) are atomic; `isReady`, `error`, the mode list and `state`
    // are written only on the loop's thread (cross-thread calls go through the loop's
    // inbox), and `state` is read elsewhere only where the loop's thread does not write it:
    // a file source's watch (never replaced), a source no loop holds, the deinit.

    /// What a source waits for: a manual event, a file descriptor, a POSIX signal or a
    /// child process's exit.
    ///
    /// A struct with static members rather than an enum, so that new kinds of source can be
    /// added without breaking code that inspects a kind.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        enum Storage: Hashable {
            case manual, idle, fileDescriptor(Int32), signal(Int32), fileChanges(String), childProcess(pid_t)
        }
        let storage: Storage

        /// Fires when ``EVSource/signal()`` was called (CF version-0 source).
        public static let manual = Kind(storage: .manual)
        /// Fires in every pass that would otherwise wait (libev's `ev_idle`).
        public static let idle = Kind(storage: .idle)
        /// Fires when the descriptor is ready for the source's ``EVSource/readiness`` (`ev_io`).
        public static func fileDescriptor(_ fd: Int32) -> Kind { Kind(storage: .fileDescriptor(fd)) }
        /// Fires after the POSIX signal arrived (`ev_signal`).
        public static func signal(_ number: Int32) -> Kind { Kind(storage: .signal(number)) }
        /// Fires after the file or directory at `path` changed (inotify, libev's `ev_stat`).
        public static func fileChanges(_ path: String) -> Kind { Kind(storage: .fileChanges(path)) }
        /// Fires once the child process exited, and reaps it (libev's `ev_child`, sd-event's
        /// `sd_event_add_child_pidfd`, GLib's `g_child_watch_add`).
        public static func childProcess(_ pid: pid_t) -> Kind { Kind(storage: .childProcess(pid)) }

        /// The descriptor of a descriptor source; nil for other kinds.
        public var fileDescriptor: Int32? {
            if case .fileDescriptor(let fd) = storage { fd } else { nil }
        }
        /// The signal number of a signal source; nil for other kinds.
        public var signalNumber: Int32? {
            if case .signal(let number) = storage { number } else { nil }
        }
        /// The watched path of a file source; nil for other kinds.
        public var watchedPath: String? {
            if case .fileChanges(let path) = storage { path } else { nil }
        }

        /// The process id of a child source; nil for other kinds (libev's `ev_child.pid`,
        /// sd-event's `sd_event_source_get_child_pid`, GLib's `GPid`).
        public var processIdentifier: pid_t? {
            if case .childProcess(let pid) = storage { pid } else { nil }
        }

        /// `manual`, `idle`, `fileDescriptor(n)`, `signal(n)`, `fileChanges(path)` or
        /// `childProcess(pid)`.
        public var description: String {
            switch storage {
            case .manual: "manual"
            case .idle: "idle"
            case .fileDescriptor(let fd): "fileDescriptor(\(fd))"
            case .signal(let number): "signal(\(number))"
            case .fileChanges(let path): "fileChanges(\(path))"
            case .childProcess(let pid): "childProcess(\(pid))"
            }
        }
    }

    /// What this source waits for.
    public let kind: Kind
    /// The position among the manual sources of a mode: lower fires first.
    public let order: Int
    /// A name for traces (``EVRunLoop/Trace``); nil shows as `"source"`.
    public let label: String?
    let handler: @Sendable (EVSource) -> Void

    /// The kind's state that other threads touch, read by kind: a manual source's signal
    /// time (monotonic ns, CF's `_signaledTime`; 0 when not signalled); a descriptor or file
    /// source's ``readiness`` (the low byte); for a descriptor or child source that owns its
    /// descriptor, ``closedBit`` once it was closed or disowned.
    private let atomicState: Atomic<UInt64>
    /// ``atomicState``'s bit for an owned descriptor closed or disowned.
    private static let closedBit: UInt64 = 1 << 8
    /// What only this source's kind keeps (``KindState``). Written on the loop's thread only.
    var state: KindState
    /// Validity and the loop the source belongs to, changed together.
    let link = LoopLink()
    // `isReady` and `modes` skip Swift's dynamic exclusivity checks (read on every ready
    // report and fire): they are used on the loop's thread only, and no access spans a
    // callout.
    /// Set when the backend reported the source ready during a wait (the source is then in
    /// the loop's ready list); consumed when the source fires. Loop thread only.
    @exclusivity(unchecked) var isReady = false
    /// The slot of the loop's ``WatchTable`` under which the backend watches the source's
    /// descriptor or signal; -1 while unwatched. Loop thread only.
    var watchToken = -1
    /// Whether the loop holds off watching the descriptor (an async sequence's source
    /// between an element and the consumer's next request). Loop thread only.
    var isPaused = false
    /// The loop this source was added to.
    var loop: EVRunLoop? { link.loop }
    /// The mode states that hold the source. Loop thread only.
    @exclusivity(unchecked) var modes: [ModeState] = []
    /// A descriptor source's file as its loop's ``DescriptorRegistry`` knows it
    /// (``Descriptor/registryEntry``); `.unregistered` for other kinds. Set only on a
    /// descriptor source. Loop thread only.
    var registryEntry: DescriptorRegistry.Entry {
        get {
            if case .descriptor(let descriptor) = state { descriptor.registryEntry } else { .unregistered }
        }
        set {
            guard case .descriptor(var descriptor) = state else {
                misuse("EVSource.registryEntry: set on a source of kind \(kind)")
            }
            descriptor.registryEntry = newValue
            state = .descriptor(descriptor)
        }
    }

    /// Why a descriptor source stopped: set (and the source invalidated) when its descriptor
    /// was found closed, or reused by another file, as the loop went to watch it or to call
    /// the handler (or went to watch that other file with another source), or when inotify
    /// refused a file source's watch as it was added; the handler is then called once so
    /// that it can see it. Nil otherwise. Loop thread only.
    public internal(set) var error: EVRunLoop.Error?

    /// A file source's watch and what it collected; nil for other kinds. Any thread: the
    /// kind is checked first, and a file source's `state` is never written.
    var fileWatch: FileWatch? {
        guard case .fileChanges = kind.storage, case .file(let watch) = state else { return nil }
        return watch
    }

    /// How a child source's child ended: set, and the child reaped, just before the handler
    /// runs; nil before, for other kinds, and when ``error`` says why the child could not
    /// be waited for (another part of the program reaped it). Loop thread only.
    ///
    /// The corresponding libev field is `ev_child`'s `rstatus`; GLib passes it to the
    /// `GChildWatchFunc`, sd-event in the `siginfo_t` of its handler.
    public var childExit: ChildExit? {
        if case .child(let child) = state { child.exit } else { nil }
    }

    var isManual: Bool {
        if case .manual = kind.storage { true } else { false }
    }
    var isIdle: Bool {
        if case .idle = kind.storage { true } else { false }
    }

    init(
        kind: Kind, order: Int, label: String?, state: KindState = .plain, readiness: Readiness = [],
        handler: @escaping @Sendable (EVSource) -> Void
    ) {
        self.kind = kind
        self.state = state
        self.atomicState = Atomic(UInt64(readiness.rawValue))
        self.order = order
        self.label = label
        self.handler = handler
    }

    deinit { closeOwnedDescriptor() }

    /// Creates a manual source, fired after ``signal()``.
    ///
    /// - Parameters:
    ///   - order: the position among the manual sources of a mode (lower fires first).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - handler: the callout, given the source.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceCreate` with a version-0 context.
    public convenience init(
        order: Int = 0, label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) {
        self.init(kind: .manual, order: order, label: label, handler: handler)
    }

    /// Creates an idle source: work that runs when the loop has nothing more urgent.
    ///
    /// While a mode holding idle sources runs, a pass that would wait polls instead, and if
    /// the poll found nothing (no descriptor, signal or wake-up ready, no timer due, no job
    /// to run), the idle sources fire, in ascending `order`, where the loop would have
    /// slept: after the blocks and manual sources of the pass, before its timers and ready
    /// sources. Such a pass does not wait, so it reports neither `beforeWaiting` nor
    /// `afterWaiting`; a polling run (a zero timeout) fires them too. The loop never sleeps
    /// while an idle source is in the running mode: invalidate or remove it when its work
    /// is done. Idle callouts do not count as a handled source for
    /// `returnAfterSourceHandled`.
    ///
    /// - Parameters:
    ///   - order: the position among the idle sources of a mode (lower fires first).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - handler: the callout, given the source.
    /// - Returns: the source, to add to a loop.
    ///
    /// CF has no idle source; the counterparts are libev's `ev_idle`, GLib's `g_idle_add`,
    /// libuv's `uv_idle` and sd-event's post sources.
    public static func idle(
        order: Int = 0, label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) -> EVSource {
        EVSource(kind: .idle, order: order, label: label, handler: handler)
    }

    /// What a descriptor source waits for: ``read``, ``write``, or both (`[.read, .write]`).
    public struct Readiness: OptionSet, Sendable, Hashable {
        /// The bits: 1 read, 2 write.
        public let rawValue: UInt8
        /// Creates readiness from its bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Data to read, or end of file (`EV_READ`).
        public static let read = Readiness(rawValue: 1)
        /// Room to write (`EV_WRITE`).
        public static let write = Readiness(rawValue: 2)
    }

    /// What a descriptor source waits for (empty for other kinds). Setting it on a live
    /// source changes what the loop watches, in O(1) and without removing the source: a
    /// writer can wait for `[.read, .write]` while it has output queued and `.read` after.
    /// Safe from any thread (from another thread, the change reaches the loop at its next
    /// pass).
    ///
    /// - Precondition: the source is a descriptor source and the new value is not empty.
    ///
    /// CF has no counterpart beyond `CFFileDescriptorEnableCallBacks` /
    /// `CFFileDescriptorDisableCallBacks`, which this replaces.
    public var readiness: Readiness {
        get {
            switch kind.storage {
            case .fileDescriptor, .fileChanges:
                Readiness(rawValue: UInt8(truncatingIfNeeded: atomicState.load(ordering: .acquiring)))
            default: []
            }
        }
        set {
            require(kind.fileDescriptor != nil,
                    "EVSource.readiness: only descriptor sources have a readiness, not \(kind)")
            require(!newValue.isEmpty, "EVSource.readiness: set to [] (use invalidate() to stop the source)")
            var old = atomicState.load(ordering: .relaxed)
            while true {
                let (exchanged, original) = atomicState.compareExchange(
                    expected: old, desired: old & ~0xFF | UInt64(newValue.rawValue), ordering: .releasing)
                if exchanged { break }
                old = original
            }
            guard let loop else { return }
            if loop.isOwnerThread {
                loop.engine.updateInterest(of: self)
            } else {
                loop.enqueue { $0.updateInterest(of: self) }
            }
        }
    }

    /// Creates a source that fires when `fileDescriptor` is ready to read or write.
    ///
    /// Invalidate the source before closing the descriptor, or pass `closesDescriptor: true`
    /// to let the source own it: ``invalidate()`` (or the source's release) then closes it,
    /// after the loop stopped watching it. A descriptor closed under the source (and its
    /// number perhaps taken by another file) makes the loop invalidate the source and call
    /// the handler once with ``error`` set, never for the other file, where the kernel
    /// lets it tell: from the add on, by the open file itself (epoll's registration key);
    /// before the add, and for files epoll refuses (regular files), by device and inode
    /// only. ``checksInvalidateBeforeClose`` stops the program instead, to find the close.
    ///
    /// - Parameters:
    ///   - fileDescriptor: an open descriptor.
    ///   - readiness: what to wait for: `.read`, `.write` or `[.read, .write]`; changeable
    ///     later through ``readiness``.
    ///   - closesDescriptor: whether the source owns the descriptor and closes it.
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - handler: the callout, given the source.
    /// - Throws: ``EVRunLoop/Error`` naming `fstat` when the descriptor is not open.
    /// - Precondition: `fileDescriptor` is not negative.
    ///
    /// The corresponding CF type is `CFFileDescriptor` (watched with libev's `ev_io`);
    /// `closesDescriptor` is `CFFileDescriptorCreate`'s `closeOnInvalidate`.
    public convenience init(
        fileDescriptor: Int32, for readiness: Readiness = .read, closesDescriptor: Bool = false,
        label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        require(fileDescriptor >= 0,
                "EVSource(fileDescriptor:): file descriptor \(fileDescriptor) is negative")
        guard let identity = Self.identity(of: fileDescriptor) else {
            throw EVRunLoop.Error(call: "EVSource(fileDescriptor: \(fileDescriptor)): fstat", errno: SystemErrno.current)
        }
        require(!readiness.isEmpty, "EVSource(fileDescriptor:for:): readiness is empty")
        let descriptor = Descriptor(fd: fileDescriptor, identity: identity, closesDescriptor: closesDescriptor)
        self.init(kind: .fileDescriptor(fileDescriptor), order: 0, label: label, state: .descriptor(descriptor),
                  readiness: readiness, handler: handler)
    }

    /// The device and inode `fd` names, or nil (errno set) if it is not open.
    static func identity(of fd: Int32) -> (device: UInt, inode: UInt)? { Descriptors.identity(of: fd) }

    /// Why the loop must not watch this descriptor source's fd (closed, or its number now
    /// names another file); nil when it may.
    func descriptorFailure() -> EVRunLoop.Error? {
        guard case .descriptor(let descriptor) = state else { return nil }
        guard let now = Self.identity(of: descriptor.fd) else {
            return Self.closedError(descriptor.fd, errno: SystemErrno.current)
        }
        return now == descriptor.identity ? nil : Self.reusedError(descriptor.fd)
    }

    /// The ``error`` of a source whose descriptor `fd` was found closed.
    static func closedError(_ fd: Int32, errno code: Int32 = EBADF) -> EVRunLoop.Error {
        EVRunLoop.Error(call: "EVSource(fileDescriptor: \(fd)): the descriptor was closed", errno: code)
    }

    /// The ``error`` of a source whose descriptor `fd` was found closed and its number
    /// naming another file.
    static func reusedError(_ fd: Int32) -> EVRunLoop.Error {
        EVRunLoop.Error(call: "EVSource(fileDescriptor: \(fd)): the descriptor was closed and its number reused",
                        errno: EBADF)
    }

    private static let invalidateBeforeCloseChecked = Atomic<Bool>(false)

    /// Whether the program stops, with a message naming the source, when a descriptor
    /// source's descriptor is found closed while the source is in a loop: the rule
    /// "invalidate a descriptor source before closing its descriptor" made checkable, for
    /// tests and debug builds. Off by default. Safe from any thread.
    ///
    /// While it is off, such a source is invalidated and its handler called once with
    /// ``error`` set, where the loop can tell (see ``init(fileDescriptor:for:closesDescriptor:label:handler:)``).
    /// While it is on, the same finding stops the program instead, and every pass also
    /// checks each watched descriptor after its wait (one system call each), so that a
    /// descriptor closed under a source is reported at the next pass even if no file took
    /// its number, and a number that changed hands during a callout is reported after it.
    ///
    /// CF, libev, GLib and sd-event have no counterpart: each leaves a descriptor closed
    /// under its watch undefined (libev: `ev_io` on a closed descriptor aborts).
    public static var checksInvalidateBeforeClose: Bool {
        get { invalidateBeforeCloseChecked.load(ordering: .relaxed) }
        set { invalidateBeforeCloseChecked.store(newValue, ordering: .relaxed) }
    }

    /// Whether this descriptor source's descriptor still names the open file the source was
    /// made for, checked as the loop checks it before each callout (one system call once
    /// the source is added; device and inode before, and for regular files). For the GLib
    /// host, which keeps a source per GLib descriptor from one GLib query to the next and
    /// must notice a number that another file took. Loop thread only.
    package var descriptorIsCurrent: Bool {
        guard let loop else { return descriptorFailure() == nil }
        require(loop.isOwnerThread, "EVSource.descriptorIsCurrent: called off the loop's thread")
        return loop.engine.staleness(of: self) == nil
    }

    /// Whether the backend reported the source ready in a wait and it has not fired since
    /// (it is in the loop's ready list). For the GLib host, which reads its epoll set's
    /// readiness after a wait only when the wait found the set readable. Loop thread only.
    package var isReportedReady: Bool { isReady }

    /// The descriptor the loop watches while a mode holding the source runs: a descriptor
    /// source's or a child source's pidfd (a file source's is the loop's inotify instance).
    var fileDescriptor: Int32? {
        switch state {
        case .descriptor(let descriptor): descriptor.fd
        case .child(let child) where child.pidfd >= 0: child.pidfd
        default: nil
        }
    }

    /// The descriptor this source closes at ``invalidate()`` (a descriptor source's made with
    /// `closesDescriptor`, a child source's pidfd); nil when none.
    private var ownedDescriptor: Int32? {
        switch state {
        case .descriptor(let descriptor) where descriptor.closesDescriptor: descriptor.fd
        case .child(let child) where child.pidfd >= 0: child.pidfd
        default: nil
        }
    }

    /// Records that the descriptor is not the source's to close any more: it was closed
    /// elsewhere, and its number may now be another file's.
    func disownDescriptor() {
        guard ownedDescriptor != nil else { return }
        _ = atomicState.bitwiseOr(Self.closedBit, ordering: .releasing)
    }

    /// Closes the descriptor if the source owns it (once).
    func closeOwnedDescriptor() {
        guard let fd = ownedDescriptor,
              atomicState.bitwiseOr(Self.closedBit, ordering: .acquiringAndReleasing).oldValue & Self.closedBit == 0
        else { return }
        Descriptors.close(fd)
    }

    /// Creates a source that fires on the loop's thread after the POSIX signal `number`
    /// arrives. Catching starts when the source is added and ends at ``invalidate()`` of the
    /// process's last source for that signal, in any loop, when the disposition the signal
    /// had before is restored. Each arrival reaches every loop with a source for the signal
    /// (sd-event and GLib deliver so too; libev's `ev_signal` binds a signal to one loop).
    /// Signals arriving faster than the loop serves them coalesce into one callout.
    ///
    /// - Precondition: `number` is in `1...64` and can be caught: not `SIGKILL` or
    ///   `SIGSTOP`, nor 32 or 33 (the C library's own).
    ///
    /// - Parameters:
    ///   - number: the signal, such as `SIGINT` or `SIGTERM`.
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - handler: the callout, given the source, on the loop's thread.
    ///
    /// The corresponding facility is a dispatch signal source (libev's `ev_signal`,
    /// sd-event's `sd_event_add_signal`, GLib's `g_unix_signal_add`).
    public convenience init(
        signal number: Int32, label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) {
        require(number >= 1 && number <= 64, "EVSource(signal:): signal number \(number) is not in 1...64")
        require(number != SIGKILL && number != SIGSTOP && !(32...33).contains(number),
                "EVSource(signal:): signal \(number) cannot be caught (SIGKILL and SIGSTOP never can; "
                    + "32 and 33 belong to the C library's threads)")
        self.init(kind: .signal(number), order: 0, label: label, handler: handler)
    }

    /// How a child process ended: it exited with a status, or a signal terminated it.
    ///
    /// The corresponding values are libev's `WIFEXITED`/`WEXITSTATUS` and
    /// `WIFSIGNALED`/`WTERMSIG` of `ev_child`'s `rstatus` (sd-event and GLib hand over the
    /// same wait status).
    public enum ChildExit: Sendable, Hashable, CustomStringConvertible {
        /// The child called `exit` (or returned from `main`) with this status, 0...255
        /// (`WIFEXITED` and `WEXITSTATUS` of libev's `rstatus`; `CLD_EXITED` in sd-event's
        /// `siginfo_t`).
        case exited(Int32)
        /// The signal that terminated the child (`SIGKILL`, `SIGTERM`, ...), whether or not
        /// it dumped core (`WIFSIGNALED` and `WTERMSIG`; `CLD_KILLED` or `CLD_DUMPED`).
        case signalled(Int32)

        /// Whether the child exited with status 0 (GLib's `g_spawn_check_wait_status`
        /// without an error).
        public var isSuccess: Bool { self == .exited(0) }

        /// `exited(status)` or `signalled(signal)`, as a log line would show it (no
        /// counterpart: libev and GLib hand over the raw wait status).
        public var description: String {
            switch self {
            case .exited(let status): "exited(\(status))"
            case .signalled(let signal): "signalled(\(signal))"
            }
        }
    }

    /// Creates a source that fires once, on the loop's thread, after the child process `pid`
    /// exited: the source reaps the child (no zombie is left), sets ``childExit`` and is
    /// invalid when the handler runs. It fires in the sources phase of a pass of a mode that
    /// holds it: a child that exits while other modes run is reported when one of its modes
    /// runs again.
    ///
    /// The source waits for `pid` only, never for another child: the program's other
    /// children stay for whoever started them to reap. It watches a pidfd where the kernel
    /// has `pidfd_open` (Linux 5.3; `waitid` on it, 5.4), and `SIGCHLD` otherwise (then
    /// `waitpid(pid, WNOHANG)` at each arrival). A source invalidated before the child exits
    /// leaves the child unreaped. If another part of the program reaps the child first (a
    /// `waitpid(-1)`), the handler is called once with ``error`` set and ``childExit`` nil.
    ///
    /// - Parameters:
    ///   - pid: a child of this process, from `posix_spawn`, `fork` or `Process`, not reaped
    ///     yet (a child that already exited is reported at the first pass).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - handler: the callout, given the source, on the loop's thread.
    /// - Throws: ``EVRunLoop/Error`` naming `waitid` when `pid` is not a child of this
    ///   process (or was reaped already), or naming `pidfd_open` when no descriptor is left.
    /// - Precondition: `pid` is positive.
    ///
    /// CF has no process source. The corresponding libev watcher is `ev_child` (which reaps
    /// with `waitpid(-1)`, any child, on the default loop only), sd-event's is
    /// `sd_event_add_child_pidfd`, GLib's `g_child_watch_add`.
    public convenience init(
        childProcess pid: pid_t, label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        try self.init(childProcess: pid, usingPidfd: true, label: label, handler: handler)
    }

    /// ``init(childProcess:label:handler:)``, with `usingPidfd: false` forcing the `SIGCHLD`
    /// path that kernels without `pidfd_open` take (for its tests).
    convenience init(
        childProcess pid: pid_t, usingPidfd: Bool, label: String? = nil,
        handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        let call = "EVSource(childProcess: \(pid))"
        require(pid > 0, "\(call): process id \(pid) is not positive")
        try EVRunLoop.Error.translating { () throws(SystemCallError) in try ChildProcess.checkIsChild(pid, call: call) }
        var pidfd: Int32 = -1
        if usingPidfd, let fd = try EVRunLoop.Error.translating({ () throws(SystemCallError) in
            try ChildProcess.openDescriptor(pid, call: call)
        }) { pidfd = fd }
        self.init(kind: .childProcess(pid), order: 0, label: label,
                  state: .child(Child(pid: pid, pidfd: pidfd)), handler: handler)
    }

    /// Whether this is a child source that learns of the exit from `SIGCHLD` (no pidfd).
    var watchesChildBySignal: Bool {
        if case .child(let child) = state { child.pidfd < 0 } else { false }
    }

    /// The signal the loop catches for this source from its add to its invalidation: a
    /// signal source's, or `SIGCHLD` for a child source without a pidfd; nil otherwise.
    var caughtSignal: Int32? { kind.signalNumber ?? (watchesChildBySignal ? SIGCHLD : nil) }

    /// For a child source reported ready: reaps the child if it exited, sets ``childExit``
    /// (or ``error``, when the child cannot be waited for) and invalidates the source;
    /// returns whether the source fires now (false while the child runs: a `SIGCHLD` for
    /// another child). True for every other kind. Loop thread only.
    func takeChildExit() -> Bool {
        guard case .child(var child) = state else { return true }
        switch ChildProcess.reap(child.pid, pidfd: child.pidfd, call: "EVSource(childProcess: \(child.pid))") {
        case .running: return false
        case .exited(let status): child.exit = .exited(status)
        case .signalled(let signal): child.exit = .signalled(signal)
        case .failed(let failure): error = EVRunLoop.Error(failure)
        }
        state = .child(child)
        invalidate()
        return true
    }

    /// Marks a manual source as ready to fire and records when (a source signalled again
    /// before it fired keeps its first time). The loop notices at its next pass, so call
    /// ``EVRunLoop/wakeUp()`` if it may be asleep. Safe from any thread.
    ///
    /// Sources signalled by the time a pass reaches its sources fire in that pass, in
    /// ascending ``order``, equal orders by signal time; one signalled meanwhile (by another
    /// source's handler, say) fires in the next pass.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceSignal`.
    public func signal() {
        require(isManual, "EVSource.signal(): only manual sources can be signalled, not \(kind)")
        let nanos = UInt64(SystemClock.monotonicNanoseconds())
        _ = atomicState.compareExchange(expected: 0, desired: max(nanos, 1), ordering: .acquiringAndReleasing)
    }

    /// Whether a manual source was signalled and has not fired since.
    public var isSignalled: Bool { isManual && atomicState.load(ordering: .acquiring) != 0 }

    /// When the source was signalled (monotonic ns), or 0 when it is not signalled.
    var signalledAt: UInt64 { atomicState.load(ordering: .acquiring) }

    /// Consumes the signalled mark.
    func takeSignal() -> Bool {
        atomicState.load(ordering: .relaxed) != 0 && atomicState.exchange(0, ordering: .acquiringAndReleasing) != 0
    }

    /// Whether the source can still fire.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceIsValid`.
    public var isValid: Bool { link.isValid }

    /// Stops the source for good: removes it from every mode and stops watching its
    /// descriptor (closing it, if the source owns it) or signal. Safe from any thread;
    /// calling it again does nothing.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceInvalidate`.
    public func invalidate() {
        let (changed, loop) = link.invalidate()
        guard changed else { return }
        guard let loop else {
            closeOwnedDescriptor()
            return
        }
        if loop.isOwnerThread {
            loop.engine.removeEverywhere(self)
        } else {
            loop.enqueue { $0.removeEverywhere(self) }
        }
    }
}
