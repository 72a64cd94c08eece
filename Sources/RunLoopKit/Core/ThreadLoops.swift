import RunLoopKitPlatform

/// The loops of one thread: the thread's own loop, created on first use, and the stack of
/// loops running on it (so that `EVRunLoop.current` inside a callout is the loop that
/// called it, virtual loops included).
///
/// The record also gives the thread an identity that is never reused (``id``): a loop is
/// owned by that id, not by a `pthread_t`, which the C library hands to a new thread as
/// soon as the old one is joined.
///
/// The corresponding CF mechanism is `__CFRunLoops` plus the thread-specific slot that
/// `CFRunLoopGetCurrent` reads.
final class ThreadLoops {
    /// This thread's identity (``ThreadIdentity/assign()``): ``mainThreadID`` on the main
    /// thread, otherwise a number no other thread of the process ever had.
    let id: UInt64
    var own: EVRunLoop?
    /// Unretained: a loop is alive while it runs (its caller holds it). Touched only by its
    /// own thread, in short accesses that never span a callout: no dynamic exclusivity check.
    @exclusivity(unchecked) var running: [Unmanaged<EVRunLoop>] = []
    /// The other loops this thread owns (virtual-clock loops), weakly.
    private var adopted: [WeakLoop] = []

    /// The main thread's identity, known before the main thread first asks for it (so that
    /// ``EVRunLoop/main`` can be created on any thread).
    static var mainThreadID: UInt64 { ThreadIdentity.main }

    private init() { id = ThreadIdentity.assign() }

    /// This thread's record, created on first use and released when the thread exits.
    /// Inlined, with the creation out of line: read at every run's start.
    @inline(__always)
    static var current: ThreadLoops {
        if let raw = key.value {
            return Unmanaged<ThreadLoops>.fromOpaque(raw).takeUnretainedValue()
        }
        return makeCurrent()
    }

    @inline(never)
    private static func makeCurrent() -> ThreadLoops {
        let record = ThreadLoops()
        key.set(Unmanaged.passRetained(record).toOpaque())
        ThreadIdentity.cache(record.id)
        return record
    }

    /// The calling thread's identity: the record's ``id``, cached in a thread-local variable
    /// (``ThreadIdentity/cached``: a short C call, where `pthread_getspecific` is a longer
    /// one, in an add and in an invalidate, read afresh at every use), and the record made on
    /// first use.
    @inline(__always)
    static var currentID: UInt64 {
        let cached = ThreadIdentity.cached
        return cached != 0 ? cached : firstID()
    }

    @inline(never)
    private static func firstID() -> UInt64 { current.id }

    /// Records that this thread owns `loop` (besides ``own``), so that its exit lets the
    /// loop's work go too.
    func adopt(_ loop: EVRunLoop) {
        if adopted.count >= 16, adopted.count.nonzeroBitCount == 1 {  // prune at powers of two
            adopted.removeAll { $0.loop == nil }
        }
        adopted.append(WeakLoop(loop: loop))
    }

    /// The slot of each thread's record; its destructor lets the record go at the thread's exit.
    private static let key = ThreadKey { raw in
        guard let raw else { return }
        // The slot reads nil from here on (POSIX clears it before this call): so does
        // the cached identity, and a later call on this thread gets a new record.
        ThreadIdentity.cache(0)
        let record = Unmanaged<ThreadLoops>.fromOpaque(raw).takeRetainedValue()
        // Work queued to the thread's loops can never run: let it go, so that it does
        // not keep them alive.
        record.own?.ownerThreadExited()
        for weak in record.adopted { weak.loop?.ownerThreadExited() }
    }
}
