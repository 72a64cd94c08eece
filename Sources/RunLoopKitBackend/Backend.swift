/// What the core asks of the thing that waits: clocks, a bounded wait, a wake from any
/// thread, and readiness of file descriptors and POSIX signals. Every instant is in
/// nanoseconds on the loop's monotonic clock (the core's `EVRunLoop.Instant` holds the same
/// number).
///
/// Two implementations, both internal to this module: `LibevBackend` (the real loop,
/// ``makeLibevBackend()``) and `VirtualBackend` (a manual clock for tests,
/// ``makeVirtualBackend(clock:)``). The core calls this protocol only, never an
/// implementation, and never sees libev; this module names nothing of the core (the
/// compiler sees to it: it is the target below).
///
/// CFRunLoop's counterpart is `__CFRunLoopServiceMachPort` and its timer port; libev's is
/// `ev_run` with its backend (epoll).
package protocol Backend: AnyObject, Sendable {
    /// The monotonic clock (ns).
    func monotonicNanos() -> Int64
    /// CF's next fire date of a repeating timer last scheduled at `scheduled` (ns): the first
    /// `scheduled + k * intervalNanos` (k ≥ 1) after the monotonic clock's reading now. A
    /// backend may tell it without reading the clock, when every reading the clock could
    /// give now has the same answer.
    func nextGridPoint(after scheduled: Int64, every intervalNanos: Int64) -> Int64
    /// The monotonic clock (ns), or an instant after it by at most `slack` ns, which a
    /// backend may tell without reading the clock: for the start of a timer's interval, which
    /// may begin that little late but never early. Successive answers never decrease, so
    /// timers added in turn with one interval keep their order.
    func monotonicNanos(lateBy slack: Int64) -> Int64
    /// Whether the monotonic clock reads `nanos` or later, which a backend may tell without
    /// reading the clock when every reading it could give now has the same answer (a run's
    /// deadline, checked once per pass). `Int64.max` is never reached. Loop thread only.
    func hasReached(_ nanos: Int64) -> Bool
    /// The monotonic clock for measurements (the loop's metrics; ns), as cheaply as the
    /// backend can read it: with `anchor`, a reading of the clock itself; without, a backend
    /// may extrapolate its last such reading (of at most a second ago) by the CPU's counter,
    /// off by no more than the clock's slew since then. Loop thread only.
    func measuringNow(anchor: Bool) -> Int64
    /// The wall clock in nanoseconds since 1970, exact (a `Date` keeps only ~0.2 µs).
    func wallNanos() -> Int64
    /// Waits as `wait` says: until a moment of its window, or with no deadline, in either case
    /// ending early when a watched descriptor or signal is ready or ``wakeUp()`` is called (a
    /// wake sent before the wait ends it at once); or polls: readiness is collected and a
    /// pending wake consumed, without sleeping (as a window at or before now also does).
    /// Readiness is reported to `events` from inside this call, on the loop's thread.
    func wait(_ wait: Wait, events: any BackendEvents)
    /// The deadline that ended the last ``wait(_:events:)`` (ns): the instant it was set to
    /// end; nil when a wake or a ready watch ended it first, or it polled.
    var expiredDeadlineNanos: Int64? { get }
    /// Whether the last ``wait(_:events:)`` was ended by, or (polling) collected, a wake, a
    /// ready watch or a wall-clock change: a wait started now would then return at once
    /// (readiness is level-triggered; a consumed wake counts as still pending).
    var collectedEvents: Bool { get }
    /// Ends the current or next ``wait(_:events:)`` early. Safe from any thread.
    func wakeUp()
    /// Whether tolerant wakes go on the machine's shared wake grid (`EVRunLoop.timerCoalescing`
    /// is `.sharedGrid`) rather than at the loop's own greedy instant. Loop thread only.
    var usesSharedGrid: Bool { get set }

    /// A descriptor that is readable whenever a wait started now would return at once: a
    /// watched descriptor or signal is ready, a wake was sent, or the deadline armed by
    /// ``prepareForeignWait(_:events:)`` has passed. Nil when the backend has none (the
    /// virtual one). Safe from any thread; the same descriptor for the backend's life.
    var pollDescriptor: Int32? { get }
    /// Whether `fd` is the number handed out as ``pollDescriptor`` (false while nobody asked
    /// for it). Safe from any thread; cheap enough for every add.
    func isPollDescriptor(_ fd: Int32) -> Bool
    /// Readies a wait that another loop does by polling ``pollDescriptor``: arms the
    /// descriptor for `wait`'s deadline (where ``wait(_:events:)`` would end a wait, without
    /// spinning), applies watch changes to the kernel's set and collects what is ready
    /// already, without sleeping. Returns the instant (ns) the descriptor becomes readable by
    /// the deadline (`Int64.max` for none); ``collectedEvents`` or
    /// ``foreignDeadlinePassed`` then tells whether there is no need to wait. Called again
    /// before ``finishForeignWait(events:)``, it keeps what it collected. Loop thread only.
    func prepareForeignWait(_ wait: Wait, events: any BackendEvents) -> Int64
    /// Whether the deadline armed by ``prepareForeignWait(_:events:)`` has passed (its
    /// expiry was collected).
    var foreignDeadlinePassed: Bool { get }
    /// Ends a wait another loop did: collects readiness and consumes a pending wake and the
    /// deadline's expiry, without sleeping. ``expiredDeadlineNanos`` is the prepared deadline
    /// if it passed. Loop thread only.
    func finishForeignWait(events: any BackendEvents)

    /// Whether this backend can watch descriptors and signals (the virtual one cannot).
    var watchesKernelEvents: Bool { get }
    /// Starts reporting readiness of `target` under `token` (a slot of the loop's watch
    /// table, unused by any other watch). O(1).
    func watch(_ target: WatchTarget, token: Int)
    /// Changes what the descriptor watched under `token` waits for, without unwatching it. O(1).
    func setInterest(_ interest: WatchInterest, token: Int)
    /// Stops reporting readiness for `token` (a signal's catching ends). O(1).
    func unwatch(_ token: Int)
}

/// What a descriptor watch waits for: libev's `EV_READ` and `EV_WRITE` (the bits of the
/// core's `EVSource.Readiness`). GLib's counterpart is `GIOCondition`'s `G_IO_IN`/`G_IO_OUT`.
package struct WatchInterest: OptionSet, Sendable, Hashable {
    /// The bits: 1 read, 2 write.
    package let rawValue: UInt8
    /// Interest from its bits.
    @inlinable package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Data to read, or end of file (`EV_READ`).
    @inlinable package static var read: WatchInterest { WatchInterest(rawValue: 1) }
    /// Room to write (`EV_WRITE`).
    @inlinable package static var write: WatchInterest { WatchInterest(rawValue: 2) }
}

/// What a backend watch waits for.
package enum WatchTarget {
    /// A file descriptor becoming ready for `interest` (libev's `ev_io`).
    case descriptor(Int32, interest: WatchInterest)
    /// A POSIX signal arriving (libev's `ev_signal`).
    case signal(Int32)
}

/// Where a backend reports what it saw during a wait (libev's watcher callbacks; the core
/// implements it).
package protocol BackendEvents: AnyObject {
    /// The watch under `token` is ready: its descriptor can be read or written, or its
    /// signal arrived.
    func ready(_ token: Int)
    /// The wall clock was set (not slewed): wall-aligned deadlines must be recomputed.
    func wallClockChanged()
    /// The process is a forked child that the backend is adopting, before its first wait
    /// there: the loop's other kernel objects shared with the parent (its inotify instance)
    /// are to be made anew now, or that wait would take the parent's events.
    func forked()
}
