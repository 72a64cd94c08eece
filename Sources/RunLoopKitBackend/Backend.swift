#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the core asks of the thing that waits: clocks, a bounded wait, a wake from any
/// thread, and readiness of file descriptors and POSIX signals.
///
/// Two implementations: ``LibevBackend`` (the real loop) and ``VirtualBackend`` (a manual
/// clock for tests). The core calls this protocol only, never an implementation, and never
/// sees libev. The dependency is one-way: the backends use nothing of the core but the plain
/// values this protocol mentions (``Wait``, ``WakeWindow``, in `Core/WakeWindow.swift`) and
/// its helpers (`require`/`misuse`, saturating arithmetic).
protocol Backend: AnyObject, Sendable {
    /// The monotonic clock.
    func now() -> EVRunLoop.Instant
    /// CF's next fire date of a repeating timer last scheduled at `scheduled`: the first
    /// `scheduled + k * intervalNanos` (k ≥ 1) after the monotonic clock's reading now. A
    /// backend may tell it without reading the clock, when every reading the clock could
    /// give now has the same answer.
    func nextGridPoint(after scheduled: EVRunLoop.Instant, every intervalNanos: Int64) -> EVRunLoop.Instant
    /// The monotonic clock, or an instant after it by at most `slack` ns, which a backend may
    /// tell without reading the clock: for the start of a timer's interval, which may begin
    /// that little late but never early. Successive answers never decrease, so timers added
    /// in turn with one interval keep their order.
    func now(lateBy slack: Int64) -> EVRunLoop.Instant
    /// Whether the monotonic clock reads `nanos` or later, which a backend may tell without
    /// reading the clock when every reading it could give now has the same answer (a run's
    /// deadline, checked once per pass). `Int64.max` is never reached. Loop thread only.
    func hasReached(_ nanos: Int64) -> Bool
    /// The monotonic clock for measurements (the loop's metrics), as cheaply as the backend
    /// can read it: with `anchor`, a reading of the clock itself; without, a backend may
    /// extrapolate its last such reading (of at most a second ago) by the CPU's counter, off
    /// by no more than the clock's slew since then. Loop thread only.
    func measuringNow(anchor: Bool) -> EVRunLoop.Instant
    /// The wall clock.
    func wallNow() -> Date
    /// The wall clock in nanoseconds since 1970, exact (a `Date` keeps only ~0.2 µs).
    func wallNanos() -> Int64
    /// Waits as `wait` says: until a moment of its window, or with no deadline, in either case
    /// ending early when a watched descriptor or signal is ready or ``wakeUp()`` is called (a
    /// wake sent before the wait ends it at once); or polls: readiness is collected and a
    /// pending wake consumed, without sleeping (as a window at or before now also does).
    /// Readiness is reported to `events` from inside this call, on the loop's thread.
    func wait(_ wait: Wait, events: any BackendEvents)
    /// The deadline that ended the last ``wait(_:events:)``: the instant it was set to end;
    /// nil when a wake or a ready watch ended it first, or it polled.
    var expiredDeadline: EVRunLoop.Instant? { get }
    /// Whether the last ``wait(_:events:)`` was ended by, or (polling) collected, a wake, a
    /// ready watch or a wall-clock change: a wait started now would then return at once
    /// (readiness is level-triggered; a consumed wake counts as still pending).
    var collectedEvents: Bool { get }
    /// Ends the current or next ``wait(_:events:)`` early. Safe from any thread.
    func wakeUp()
    /// Whether tolerant wakes go on the shared ``WakeGrid`` (``EVRunLoop/timerCoalescing``
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
    /// already, without sleeping. Returns the instant the descriptor becomes readable by
    /// the deadline (`.distantFuture` for none); ``collectedEvents`` or
    /// ``foreignDeadlinePassed`` then tells whether there is no need to wait. Called again
    /// before ``finishForeignWait(events:)``, it keeps what it collected. Loop thread only.
    func prepareForeignWait(_ wait: Wait, events: any BackendEvents) -> EVRunLoop.Instant
    /// Whether the deadline armed by ``prepareForeignWait(_:events:)`` has passed (its
    /// expiry was collected).
    var foreignDeadlinePassed: Bool { get }
    /// Ends a wait another loop did: collects readiness and consumes a pending wake and the
    /// deadline's expiry, without sleeping. ``expiredDeadline`` is the prepared deadline if it
    /// passed. Loop thread only.
    func finishForeignWait(events: any BackendEvents)

    /// Whether this backend can watch descriptors and signals (the virtual one cannot).
    var watchesKernelEvents: Bool { get }
    /// Starts reporting readiness of `target` under `token` (a slot of the loop's
    /// ``WatchTable``, unused by any other watch). O(1).
    func watch(_ target: WatchTarget, token: Int)
    /// Changes what the descriptor watched under `token` waits for, without unwatching it. O(1).
    func setInterest(_ interest: EVSource.Readiness, token: Int)
    /// Stops reporting readiness for `token` (a signal's catching ends). O(1).
    func unwatch(_ token: Int)
}

/// What a backend watch waits for.
enum WatchTarget {
    /// A file descriptor becoming ready for `interest` (libev's `ev_io`).
    case descriptor(Int32, interest: EVSource.Readiness)
    /// A POSIX signal arriving (libev's `ev_signal`).
    case signal(Int32)
}

/// Where a backend reports what it saw during a wait.
protocol BackendEvents: AnyObject {
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

extension Backend {
    /// The loop-clock instant (ns) of wall-clock `date`, exact to the nanosecond the `Date`
    /// holds, saturating at `Int64`'s range.
    func nanos(at date: Date) -> Int64 {
        let ahead = date.nanosecondsSince1970.saturatingSubtract(wallNanos())
        return now().nanoseconds.saturatingAdd(ahead)
    }

    /// The wall-clock date of loop-clock instant `nanos`.
    func date(atNanos nanos: Int64) -> Date {
        EVVirtualClock.date(nanoseconds: wallNanos().saturatingAdd(nanos.saturatingSubtract(now().nanoseconds)))
    }
}
