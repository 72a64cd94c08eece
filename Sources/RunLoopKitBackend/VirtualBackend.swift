import Synchronization
import RunLoopKitPlatform

/// The backend of a loop on a virtual clock (the core's `EVVirtualClock`, as ``VirtualTime``):
/// a wait with a deadline moves the clock to it and returns at once; a wait without one
/// blocks until ``wakeUp()``. Its wakes are never late, so it wakes at the window's
/// ``WakeWindow/served`` instant: exactly the greedy schedule; with the shared grid, at the
/// grid point the window allows (no reserve), on the clock's grid
/// (``VirtualTime/gridPhaseNanos``).
///
/// File descriptors and signals need the real kernel: `EVRunLoop` refuses to add such
/// sources to a virtual loop.
final class VirtualBackend: Backend {
    let clock: any VirtualTime
    private let wakePending = Mutex(false)
    private let sleeper = Sleeper()
    private let grid: WakeGrid
    private let sharedGrid = Atomic(false)
    /// The deadline (ns) that ended the last wait, `.min` for none (an atomic only because
    /// the backend is `Sendable`; the loop's thread alone uses it).
    private let expired = Atomic<Int64>(.min)
    /// ``collectedEvents``: the last wait ended on a wake or a wall-clock change.
    private let collected = Atomic(false)

    init(clock: any VirtualTime) {
        self.clock = clock
        grid = WakeGrid(phase: clock.gridPhaseNanos)
    }

    var usesSharedGrid: Bool {
        get { sharedGrid.load(ordering: .relaxed) }
        set { sharedGrid.store(newValue, ordering: .relaxed) }
    }

    var expiredDeadlineNanos: Int64? {
        let deadline = expired.load(ordering: .relaxed)
        return deadline == .min ? nil : deadline
    }

    func monotonicNanos() -> Int64 { clock.nowNanos }
    func nextGridPoint(after scheduled: Int64, every intervalNanos: Int64) -> Int64 {
        scheduled.firstGridPoint(every: intervalNanos, after: clock.nowNanos)
    }
    func monotonicNanos(lateBy slack: Int64) -> Int64 { clock.nowNanos }
    func measuringNow(anchor: Bool) -> Int64 { clock.nowNanos }
    func hasReached(_ nanos: Int64) -> Bool { nanos != .max && clock.nowNanos >= nanos }
    func wallNanos() -> Int64 { clock.wallClockNanos }

    var collectedEvents: Bool { collected.load(ordering: .relaxed) }

    /// A virtual loop has no descriptor to poll: its time moves by hand, not by the kernel's.
    var pollDescriptor: Int32? { nil }
    func isPollDescriptor(_ fd: Int32) -> Bool { false }
    var foreignDeadlinePassed: Bool { false }
    func prepareForeignWait(_ wait: Wait, events: any BackendEvents) -> Int64 {
        misuse("EVRunLoop: a loop on a virtual clock cannot be driven by another loop; it has no descriptor")
    }
    func finishForeignWait(events: any BackendEvents) {
        misuse("EVRunLoop: a loop on a virtual clock cannot be driven by another loop; it has no descriptor")
    }

    func wait(_ wait: Wait, events: any BackendEvents) {
        expired.store(.min, ordering: .relaxed)
        collected.store(true, ordering: .relaxed)
        // A wall clock set before the wait ends it at once, as the real loop's
        // TFD_TIMER_CANCEL_ON_SET timerfd does, so that aligned timers re-align first.
        if clock.consumeWallClockChange() {
            events.wallClockChanged()
            return
        }
        if takeWake() { return }
        collected.store(false, ordering: .relaxed)
        switch wait {
        case .poll:
            return
        case .until(let window):
            let target = usesSharedGrid ? grid.place(window, reserve: 0) ?? window.served : window.served
            clock.advance(toNanos: target)
            expired.store(target, ordering: .relaxed)
        case .forever:
            sleeper.sleep(until: takeWake)
            collected.store(true, ordering: .relaxed)  // only a wake ends it
        }
    }

    /// Consumes a pending wake, if any.
    private func takeWake() -> Bool {
        wakePending.withLock { pending in
            defer { pending = false }
            return pending
        }
    }

    func wakeUp() {
        wakePending.withLock { $0 = true }
        sleeper.wake()
    }

    var watchesKernelEvents: Bool { false }

    func watch(_ target: WatchTarget, token: Int) {
        misuse("descriptor and signal sources need the real loop, not an EVVirtualClock loop")
    }

    func setInterest(_ interest: WatchInterest, token: Int) {}

    func unwatch(_ token: Int) {}
}
