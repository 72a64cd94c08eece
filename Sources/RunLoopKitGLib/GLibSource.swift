internal import CRunLoopKitGLib

/// What a ``GLibSource`` asks of the Swift side at each stage of GLib's iteration.
protocol GLibSourceStages: AnyObject {
    /// GSource's `prepare`: the timeout in milliseconds (rounded up; -1 for none); 0 means
    /// ready now, dispatched without waiting.
    func prepare() -> Int32
    /// GSource's `check`, after GLib's poll: whether to dispatch. `readable`: the source's
    /// descriptor polled readable.
    func check(readable: Bool) -> Bool
    /// GSource's `dispatch`.
    func dispatch()
}

/// A `GSource` (gmain.c's `GSourceFuncs`) whose stages call a Swift object, with one
/// descriptor GLib polls for reading (`g_source_add_unix_fd`). Besides `GLibContext.swift`,
/// the one file that calls GLib.
///
/// The `GSource` holds a ``Box`` (retained, in the bytes GLib allocates after the `GSource`
/// struct), and the box its stages, until GLib finalizes the source: after ``destroy()`` and
/// the last reference, which may be GLib's own while it dispatches the source.
final class GLibSource {
    /// What the `GSource` holds: the stages, and the descriptor's tag for the check.
    final class Box {
        let stages: GLibSourceStages
        var tag: gpointer?
        init(stages: GLibSourceStages) { self.stages = stages }
    }

    private let source: UnsafeMutablePointer<GSource>
    private let box: Box

    /// A source named `name` (`g_source_set_name`) at `priority`, not attached yet.
    init(stages: GLibSourceStages, name: String, priority: Int32) {
        box = Box(stages: stages)
        source = g_source_new(GLibSourceFuncs.shared, guint(GLibSourceFuncs.size))
        GLibSourceFuncs.boxSlot(of: source).initialize(to: Unmanaged.passRetained(box).toOpaque())
        g_source_set_name(source, name)
        g_source_set_priority(source, priority)
        // GLib blocks a source that cannot recurse while it dispatches it: it takes the
        // source's descriptors out of the context's poll set and puts them back, each change
        // a write to the context's wakeup descriptor, so every dispatch left a wakeup behind
        // and cost GLib one more iteration (poll, read, prepare). The stages keep a nested
        // iteration away themselves (``pausePolling()``).
        g_source_set_can_recurse(source, 1)
    }

    /// Drops this object's reference (`g_source_unref`); the context keeps its own until
    /// ``destroy()``.
    deinit { g_source_unref(source) }

    /// `g_source_add_unix_fd` for reading.
    func pollForReading(_ fd: Int32) {
        box.tag = g_source_add_unix_fd(source, fd, G_IO_IN)
        polledDescriptor = fd
    }

    /// The descriptor GLib polls, and the one ``pausePolling()`` took out.
    private var polledDescriptor: Int32?
    private var pausedDescriptor: Int32?

    /// Takes the descriptor out of GLib's poll (`g_source_remove_unix_fd`) until
    /// ``resumePolling()``: for an iteration of GLib nested in this source's dispatch, which
    /// must not wake on it. Does nothing when paused already.
    func pausePolling() {
        guard let tag = box.tag else { return }
        g_source_remove_unix_fd(source, tag)
        box.tag = nil
        pausedDescriptor = polledDescriptor
    }

    /// Polls the descriptor again after ``pausePolling()``; does nothing when not paused.
    func resumePolling() {
        guard let fd = pausedDescriptor else { return }
        pausedDescriptor = nil
        pollForReading(fd)
    }

    /// `g_source_attach`.
    func attach(to context: GLibContext) { g_source_attach(source, context.pointer) }

    /// `g_source_destroy`: GLib stops polling and dispatching the source.
    func destroy() { g_source_destroy(source) }
}

/// The one `GSourceFuncs` every ``GLibSource`` shares (GLib keeps the pointer), and the slot
/// after each `GSource` struct where its box lives.
private enum GLibSourceFuncs {
    // Safe to share: written once, here, before any source exists; GLib only reads it.
    nonisolated(unsafe) static let shared: UnsafeMutablePointer<GSourceFuncs> = {
        let funcs = UnsafeMutablePointer<GSourceFuncs>.allocate(capacity: 1)
        funcs.initialize(to: GSourceFuncs(
            prepare: { source, timeout in
                let value = withBox(of: source!) { $0.stages.prepare() }
                timeout?.pointee = value
                return value == 0 ? 1 : 0
            },
            check: { source in
                withBox(of: source!) { box in
                    var readable = false
                    if let tag = box.tag {
                        readable = g_source_query_unix_fd(source, tag).rawValue & G_IO_IN.rawValue != 0
                    }
                    return box.stages.check(readable: readable) ? 1 : 0
                }
            },
            dispatch: { source, _, _ in
                withBox(of: source!) { $0.stages.dispatch() }
                return 1  // G_SOURCE_CONTINUE: only destroy() ends it
            },
            finalize: { source in
                Unmanaged<GLibSource.Box>.fromOpaque(boxSlot(of: source!).pointee).release()
            },
            closure_callback: nil,
            closure_marshal: nil))
        return funcs
    }()

    /// Bytes to allocate per source: the `GSource` struct, then one pointer.
    static let size = MemoryLayout<GSource>.stride + MemoryLayout<UnsafeMutableRawPointer>.stride

    static func boxSlot(of source: UnsafeMutablePointer<GSource>) -> UnsafeMutablePointer<UnsafeMutableRawPointer> {
        UnsafeMutableRawPointer(source).advanced(by: MemoryLayout<GSource>.stride)
            .assumingMemoryBound(to: UnsafeMutableRawPointer.self)
    }

    /// Runs `body` with the source's box, with no retain of it: the `GSource` holds the box
    /// until its finalizer, and GLib holds the source while it runs one of its stages.
    static func withBox<Result>(of source: UnsafeMutablePointer<GSource>, _ body: (GLibSource.Box) -> Result) -> Result {
        Unmanaged<GLibSource.Box>.fromOpaque(boxSlot(of: source).pointee)._withUnsafeGuaranteedRef(body)
    }
}
