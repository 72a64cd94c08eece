#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import RunLoopKitPlatform

/// A timer that fires once or repeatedly in the modes of one run loop.
///
/// - Fire dates live on the loop's monotonic clock: setting the wall clock never moves them
///   (except for aligned timers, ``init(alignedTo:offset:tolerance:label:block:)-(TimeInterval,_,_,_,_)``
///   and its `Duration` twin, which follow the wall clock on purpose).
/// - A repeating timer's next fire date is its previous *scheduled* date plus ``interval``,
///   so late fires cause no drift; fires missed while the loop was busy or running another
///   mode are skipped, never delivered in a burst.
/// - A timer never fires early. With a ``tolerance`` it may fire up to that much late, which
///   lets the loop serve several timers with one wake.
/// - A fire date beyond the clock's range (about 292 years from its origin), such as
///   `Date.distantFuture` or an interval of `.seconds(Int64.max)`, means "never": the timer
///   stays scheduled but never fires or wakes the loop.
///
/// ```swift
/// let timer = EVTimer(interval: 1, repeats: true, tolerance: 0.1) { _ in print("refresh") }
/// EVRunLoop.current.add(timer, forMode: .common)
/// ```
///
/// The corresponding CFRunLoop type is `CFRunLoopTimer` (`Timer` in Foundation).
public final class EVTimer: @unchecked Sendable {
    // Safe to share: the schedule (everything but `link`, `block`, `extrasAddress` and the
    // constants, and the extras' tolerance and places) is written only on the thread of the
    // loop the timer was added to, or on the creating thread before it is added, and read
    // there too, except the start, which another thread's first add reads (through relaxed
    // atomics: see `fireNanos`); calls from other threads are forwarded to the loop's inbox.
    // `link` (validity and loop) and `extrasAddress` (set once) are atomic; `block` and the
    // constants never change.

    // Stored properties are declared in an order that packs them, those an invalidate
    // touches first (within 40 bytes of the header: one cache line, or two), then the rest
    // a fire reads; what few timers use (a label, wall-clock alignment, a release hook, a
    // tolerance, modes after the first) sits out of line in ``TimerExtras``: 88 bytes per
    // timer (a 96-byte malloc block). Most of them are the engine's schedule: a class's
    // stored properties cannot be declared in an extension, so they are here, and the
    // engine reads and writes them through `Core/EVTimer+Engine.swift` (the start and its
    // kind, the bits, the fire instant, the extras) and `Core/TimerPlaces.swift` (places).

    /// Validity and the loop the timer belongs to, changed together (a timer serves one loop
    /// only, as in CF).
    let link = LoopLink()

    // Loop thread only (see above); plain reads and writes that never span a callout.
    /// Where the timer is queued in its first mode (the others are in its extras: see
    /// ``allPlaces``).
    var firstPlace: TimerPlace?
    /// `isFiring`, `fireDateSetInCallout`, `heldByPass` (bits 0–2) and the ``StartKind``
    /// (bits 4–6) in one byte, so the timer's small fields fit after `firstPlace`. Written
    /// on the loop's thread (or the creating thread, before the add); relaxed atomics, plain
    /// moves, for the one read from elsewhere (see ``fireNanos``).
    let bitsStorage = Atomic<UInt8>(0)
    /// Whether the timer fires again every interval (a constant of its own, read anywhere).
    let repeats: Bool
    /// Queue releases left to the firing pass that holds the timer (see ``heldByPass``).
    var releasesAfterFiring: UInt16 = 0
    /// The address of the timer's ``TimerExtras`` (retained, released in `deinit`); 0 while
    /// it has none. Set once, atomically: other threads read the label through it.
    let extrasAddress: Atomic<UInt>
    /// ``fireNanos``: the next fire instant once resolved; before that, the payload of
    /// ``start``.
    let fireNanosStorage = Atomic<Int64>(0)
    let intervalNanos: Int64
    let block: @Sendable (EVTimer) -> Void
    /// Tie-breaker for equal fire dates: creation order.
    let sequence: UInt64

    deinit {
        if let extras = Self.extras(at: extrasAddress.load(ordering: .acquiring)) { extras.release() }
    }

    /// The loop this timer was added to.
    var loop: EVRunLoop? { link.loop }

    private static let counter = Atomic<UInt64>(0)

    init(
        start: Start, intervalNanos: Int64, repeats: Bool, toleranceNanos: Int64,
        alignmentOffsetNanos: Int64?, label: String?, loopReleased: (@Sendable () -> Void)? = nil,
        block: @escaping @Sendable (EVTimer) -> Void
    ) {
        // First: the block's reference is then moved into the timer, where after the atomic
        // the compiler retained it for the store and released the argument.
        sequence = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue  // one `lock xadd` (2^64 timers never wrap)
        self.repeats = repeats
        self.intervalNanos = intervalNanos
        let extras = label == nil && alignmentOffsetNanos == nil && loopReleased == nil && toleranceNanos == 0
            ? nil
            : Unmanaged.passRetained(TimerExtras(
                label: label, alignmentOffsetNanos: alignmentOffsetNanos, loopReleased: loopReleased,
                toleranceNanos: toleranceNanos))
        extrasAddress = Atomic(extras.map { UInt(bitPattern: $0.toOpaque()) } ?? 0)
        self.block = block
        self.start = start
    }

    /// Creates a timer that first fires `interval` seconds after it is added to a loop.
    ///
    /// The interval starts during the add, read from the CPU's counter when that is cheaper
    /// than the clock: never before the add, and late by at most 1/256 of the interval and
    /// 4 µs (an interval under about 0.5 ms starts at a clock reading).
    ///
    /// - Parameters:
    ///   - interval: seconds until the first fire, and between fires when repeating. A
    ///     repeating interval at or below zero becomes 0.1 ms, as Foundation documents.
    ///   - repeats: whether the timer fires again every `interval` seconds.
    ///   - tolerance: how late, in seconds, the timer may fire (default 0).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the callout, given the timer.
    ///
    /// The corresponding Foundation initializer is `Timer(timeInterval:repeats:block:)`.
    public convenience init(
        interval: TimeInterval, repeats: Bool, tolerance: TimeInterval = 0, label: String? = nil,
        block: @escaping @Sendable (EVTimer) -> Void
    ) {
        let checked = Self.checkedInterval(interval, repeats: repeats, call: "EVTimer(interval:)")
        self.init(
            start: .afterInterval(max(0, checked)), intervalNanos: checked, repeats: repeats,
            toleranceNanos: Self.checkedTolerance(tolerance, call: "EVTimer(interval:)"),
            alignmentOffsetNanos: nil, label: label, block: block)
    }

    /// Creates a timer that first fires `interval` after it is added to a loop (started as
    /// ``init(interval:repeats:tolerance:label:block:)`` describes).
    ///
    /// The `Duration` spelling of ``init(interval:repeats:tolerance:label:block:)``.
    ///
    /// - Parameters:
    ///   - interval: the time until the first fire, and between fires when repeating.
    ///   - repeats: whether the timer fires again every `interval`.
    ///   - tolerance: how late the timer may fire (default zero).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the callout, given the timer.
    public convenience init(
        interval: Duration, repeats: Bool, tolerance: Duration = .zero, label: String? = nil,
        block: @escaping @Sendable (EVTimer) -> Void
    ) {
        let call = "EVTimer(interval: Duration)"
        let checked = Self.checkedInterval(nanos: interval.nanoseconds, repeats: repeats)
        self.init(
            start: .afterInterval(max(0, checked)), intervalNanos: checked, repeats: repeats,
            toleranceNanos: Self.checkedTolerance(nanos: tolerance.nanoseconds, call: call),
            alignmentOffsetNanos: nil, label: label, block: block)
    }

    /// Creates a timer that first fires at `date`, then every `interval` seconds if it repeats.
    ///
    /// `date` is turned into an instant of the loop's monotonic clock when the timer is
    /// added; a date in the past fires in the next pass.
    ///
    /// - Parameters:
    ///   - date: the first fire date, on the wall clock.
    ///   - interval: seconds between fires when repeating.
    ///   - repeats: whether the timer fires again every `interval` seconds.
    ///   - tolerance: how late, in seconds, the timer may fire (default 0).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the callout, given the timer.
    ///
    /// The corresponding Foundation initializer is `Timer(fire:interval:repeats:block:)`.
    public convenience init(
        fireAt date: Date, interval: TimeInterval = 0, repeats: Bool = false,
        tolerance: TimeInterval = 0, label: String? = nil,
        block: @escaping @Sendable (EVTimer) -> Void
    ) {
        let call = "EVTimer(fireAt:)"
        require(date.timeIntervalSince1970.isFinite,
                "\(call): fireAt \(date.timeIntervalSince1970) is not finite")
        self.init(
            start: .at(date), intervalNanos: Self.checkedInterval(interval, repeats: repeats, call: call),
            repeats: repeats, toleranceNanos: Self.checkedTolerance(tolerance, call: call),
            alignmentOffsetNanos: nil, label: label, block: block)
    }

    /// Creates a timer that first fires at `instant` of the loop's monotonic clock, then
    /// every `interval` if it repeats: exact to the nanosecond, untouched by wall-clock
    /// conversions (what virtual-time tests want).
    ///
    /// - Parameters:
    ///   - instant: the first fire date, on the loop's monotonic clock (`loop.now + delay`).
    ///   - interval: the time between fires when repeating.
    ///   - repeats: whether the timer fires again every `interval`.
    ///   - tolerance: how late the timer may fire (default zero).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the callout, given the timer.
    ///
    /// The corresponding CF notion is a timer's `_fireTSR`, set directly.
    public convenience init(
        fireAt instant: EVRunLoop.Instant, interval: Duration = .zero, repeats: Bool = false,
        tolerance: Duration = .zero, label: String? = nil,
        block: @escaping @Sendable (EVTimer) -> Void
    ) {
        let call = "EVTimer(fireAt: Instant)"
        self.init(
            start: .instant(instant.nanoseconds),
            intervalNanos: Self.checkedInterval(nanos: interval.nanoseconds, repeats: repeats),
            repeats: repeats, toleranceNanos: Self.checkedTolerance(nanos: tolerance.nanoseconds, call: call),
            alignmentOffsetNanos: nil, label: label, block: block)
    }

    /// Creates a repeating timer aligned to the wall clock: it fires at every
    /// `k * interval + offset` seconds since 1970 (UTC), for example on every whole second.
    ///
    /// When the wall clock is set, the timer re-aligns to the new clock at the loop's next
    /// wake. This is libev's `ev_periodic` idea with RunLoopKit's precise deadline.
    ///
    /// - Parameters:
    ///   - interval: the grid step in seconds, greater than zero.
    ///   - offset: the grid's phase, in `[0, interval)`.
    ///   - tolerance: how late, in seconds, the timer may fire (default 0).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the callout, given the timer.
    public convenience init(
        alignedTo interval: TimeInterval, offset: TimeInterval = 0, tolerance: TimeInterval = 0,
        label: String? = nil, block: @escaping @Sendable (EVTimer) -> Void
    ) {
        let call = "EVTimer(alignedTo:offset:)"
        require(interval.isFinite && interval >= 1e-9 && interval <= 1e9,
                "\(call): interval \(interval) must be between 1e-9 and 1e9 seconds")
        require(offset.isFinite && offset >= 0 && offset < interval,
                "\(call): offset \(offset) must be in [0, \(interval))")
        self.init(
            start: .afterInterval(0), intervalNanos: Int64((interval * 1e9).rounded()), repeats: true,
            toleranceNanos: Self.checkedTolerance(tolerance, call: call),
            alignmentOffsetNanos: Int64((offset * 1e9).rounded()), label: label, block: block)
    }

    /// Seconds to nanoseconds; beyond ±9e9 s (285 years) the interval is clamped there.
    ///
    /// The checks are inlined into the initializers and their reports are out of line
    /// (``notFinite(_:_:call:)``, ``checkedNonzeroTolerance(_:call:)``): a timer's creation
    /// then makes no call for them (PROFILING.md, "Tricks and what they earn").
    @inline(__always)
    private static func checkedInterval(_ interval: TimeInterval, repeats: Bool, call: String) -> Int64 {
        if _slowPath(!interval.isFinite) { notFinite("interval", interval, call: call) }
        return checkedInterval(nanos: nanoseconds(min(max(interval, -9e9), 9e9)), repeats: repeats)
    }

    /// Stops the program: `value`, given as the `what` of `call`, is not finite.
    @inline(never)
    private static func notFinite(_ what: String, _ value: Double, call: String) -> Never {
        misuse("\(call): \(what) \(value) is not finite")
    }

    /// A non-positive repeating interval becomes 0.1 ms, Foundation's documented floor.
    private static func checkedInterval(nanos: Int64, repeats: Bool) -> Int64 {
        repeats && nanos <= 0 ? 100_000 : nanos
    }

    @inline(__always)
    static func checkedTolerance(_ tolerance: TimeInterval, call: String) -> Int64 {
        tolerance == 0 ? 0 : checkedNonzeroTolerance(tolerance, call: call)  // 0: the common case
    }

    @inline(never)
    private static func checkedNonzeroTolerance(_ tolerance: TimeInterval, call: String) -> Int64 {
        require(tolerance.isFinite, "\(call): tolerance \(tolerance) is not finite")
        require(tolerance >= 0, "\(call): tolerance \(tolerance) s is negative")
        return nanoseconds(min(tolerance, 9e9))
    }

    /// `seconds` in whole nanoseconds, to the nearest (ties away from zero), for finite
    /// `seconds` within ±9e9.
    ///
    /// `rounded()` is a call of libm's `round` on x86-64 without SSE4.1; this is the same
    /// rounding in a few instructions (PROFILING.md, "Tricks and what they earn"). The
    /// product truncated toward zero is a whole `Double`, so the fraction left is exact, in
    /// (-1, 1); `fraction - 0.5` and `-0.5 - fraction` are exact too, and +0 at a tie, so
    /// their sign bits are clear exactly when the product rounds away from zero: no branch
    /// for random fractions to mispredict. (From 2^52 on, the product is whole and its
    /// fraction 0.)
    @inline(__always)
    static func nanoseconds(_ seconds: Double) -> Int64 {
        let product = seconds * 1e9
        let whole = Int64(product)
        let fraction = product - Double(whole)
        let up = Int64(bitPattern: ~(fraction - 0.5).bitPattern >> 63)
        let down = Int64(bitPattern: ~(-0.5 - fraction).bitPattern >> 63)
        return whole &+ up &- down
    }

    static func checkedTolerance(nanos: Int64, call: String) -> Int64 {
        require(nanos >= 0, "\(call): tolerance \(Double(nanos) / 1e9) s is negative")
        return nanos
    }

    // MARK: Public state

    /// Seconds between fires of a repeating timer; 0 for a one-shot timer, as in CF.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopTimerGetInterval`.
    public var interval: TimeInterval { repeats ? Double(intervalNanos) / 1e9 : 0 }

    /// Whether the timer is aligned to the wall clock.
    public var isAligned: Bool { alignmentOffsetNanos != nil }

    /// A name for traces (``EVRunLoop/Trace``); nil shows as `"timer"`.
    public var label: String? { withExtras { $0.label } ?? nil }

    /// How late, in seconds, the timer may fire. Setting it takes effect at once.
    ///
    /// The corresponding CFRunLoop functions are `CFRunLoopTimerGetTolerance` and
    /// `CFRunLoopTimerSetTolerance`; unlike CF on Linux, RunLoopKit honours it.
    public var tolerance: TimeInterval {
        get { Double(toleranceNanos) / 1e9 }
        set {
            let nanos = Self.checkedTolerance(newValue, call: "EVTimer.tolerance")
            onLoopThread { timer in
                timer.toleranceNanos = nanos
                timer.loop?.engine.reschedule(timer)
            }
        }
    }

    /// When the timer fires next. Setting it reschedules the timer; a date in the past means
    /// now, so the timer fires in the next pass, as CF clamps it. The date is read on the
    /// loop's own wall clock: on a loop built on an ``EVVirtualClock``, write
    /// `loop.wallNow + 0.3`, not `Date() + 0.3` (the real date, months away from the virtual
    /// one), or use ``setFireInstant(_:)`` / ``restart(after:)``, which are exact to the
    /// nanosecond where a `Date` keeps about 0.24 µs. A date set inside the
    /// timer's own callout replaces the repeating timer's next interval, even a date in the
    /// past (which, being now, is later than the fire just served); a one-shot timer is
    /// invalidated after its callout all the same.
    ///
    /// The corresponding CFRunLoop functions are `CFRunLoopTimerGetNextFireDate` and
    /// `CFRunLoopTimerSetNextFireDate`.
    public var fireDate: Date {
        get {
            switch start {
            case .at(let date): return date
            case .instant(let nanos): return loop?.backend.date(atNanos: nanos) ?? Date.distantPast
            case .afterInterval(let nanos):
                return Date(timeIntervalSinceNow: Double(nanos) / 1e9)
            case .monotonicGrid:
                return Date(timeIntervalSinceNow: Double(intervalNanos) / 1e9)
            case .resolved:
                return loop?.backend.date(atNanos: fireNanos) ?? Date.distantPast
            }
        }
        set {
            require(newValue.timeIntervalSince1970.isFinite,
                    "EVTimer.fireDate: \(newValue.timeIntervalSince1970) is not finite")
            onLoopThread { timer in timer.move(to: .at(newValue)) }
        }
    }

    /// When the timer fires next, on its loop's monotonic clock; nil until it is added to a
    /// loop. Inside the timer's callout it is the fire date being served, so
    /// `loop.now - fireInstant` is how late the callout runs. Loop thread only.
    ///
    /// The corresponding CF field is the timer's `_fireTSR`.
    public var fireInstant: EVRunLoop.Instant? {
        if case .resolved = start { return EVRunLoop.Instant(nanoseconds: fireNanos) }
        return nil
    }

    /// Moves the next fire to `instant` of the loop's monotonic clock, exact to the
    /// nanosecond; before the timer is added, it becomes the first fire. An instant in the
    /// past means now. Inside the timer's own callout, it replaces the next interval, as
    /// setting ``fireDate`` does. Safe from any thread.
    ///
    /// - Parameter instant: when to fire next.
    ///
    /// The corresponding CF operation is `CFRunLoopTimerSetNextFireDate` on the `_fireTSR`
    /// time base.
    public func setFireInstant(_ instant: EVRunLoop.Instant) {
        onLoopThread { timer in timer.move(to: .instant(instant.nanoseconds)) }
    }

    /// Restarts the timer so that it fires `delay` from now on its loop's clock: the idiom of
    /// idle timeouts and debouncers (libev's `ev_timer_again`). Before the timer is added,
    /// it fires `delay` after it is added. Safe from any thread.
    ///
    /// - Parameter delay: how long from now (the loop's now, when the request runs on its
    ///   thread) to the next fire; negative means now.
    public func restart(after delay: Duration) {
        restart(afterNanoseconds: delay.nanoseconds)
    }

    /// ``restart(after:)`` in nanoseconds, for the package's modules: no `Duration`
    /// arithmetic per call (the GLib host restarts its timeout every iteration).
    package func restart(afterNanoseconds delay: Int64) {
        onLoopThread { timer in timer.move(to: .afterInterval(max(0, delay))) }
    }

    /// Whether the timer can still fire.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopTimerIsValid`.
    public var isValid: Bool { link.isValid }

    /// Stops the timer for good and removes it from every mode. Safe from any thread;
    /// calling it again does nothing.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopTimerInvalidate`.
    public func invalidate() {
        // A timer never added needs no thread identity (asking for it would give this
        // thread a loop record): the link asks only once a loop claimed it.
        switch link.invalidate(from: { ThreadLoops.currentID }) {
        case .unchanged:
            return
        case .onOwnerThread:
            // A queued timer reaches its loop through its first mode (the loop is alive while
            // its queues hold the timer); otherwise through the link.
            if let place = firstPlace {
                place.withEngine { $0.removeEverywhere(self) }
            } else if let loop = link.loop {
                loop.engine.removeEverywhere(self)
            }
        case .elsewhere(let loop):
            guard let loop else { return }
            if loop.isOwnerThread {
                loop.engine.removeEverywhere(self)
            } else {
                loop.enqueue { $0.removeEverywhere(self) }
            }
        }
    }

    /// Runs the callout now, on the calling thread. A repeating timer keeps its schedule; a
    /// one-shot timer is invalidated afterwards, as Foundation's `Timer.fire()` documents.
    public func fire() {
        guard isValid else { return }
        block(self)
        if !repeats { invalidate() }
    }

    /// Runs `body` now if the timer is not attached or this is its loop's thread; otherwise
    /// hands it to the loop's inbox.
    func onLoopThread(_ body: @escaping @Sendable (EVTimer) -> Void) {
        if let loop, !loop.isOwnerThread {
            loop.enqueue { _ in body(self) }
        } else {
            body(self)
        }
    }
}
