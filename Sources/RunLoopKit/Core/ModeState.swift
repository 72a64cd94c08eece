/// Everything one mode of one loop holds: its observers, timers and sources.
///
/// Adding and removing are O(1) (observers and sources) or O(log n) (timers); the ordered
/// lists are rebuilt when first read after a change (see ``Members``).
///
/// The corresponding CF structure is `struct __CFRunLoopMode`.
///
/// Its tables skip Swift's dynamic exclusivity checks: they are touched only on the loop's
/// thread, and every use is a short access that never spans a callout (notifications
/// iterate a copy of `observers`; timer passes re-read the queue after each callout).
final class ModeState {
    let mode: EVRunLoop.Mode
    /// The engine that owns this state. Unowned: an engine's mode states live in its `modes`
    /// and go with it; a timer queued here reaches its engine through this while the engine is
    /// alive (its teardown empties every timer's places first).
    unowned(unsafe) let engine: LoopEngine
    /// Whether the mode is one of the loop's common modes (set by the engine, which never
    /// takes a mode out of them): a pass asks this per job batch and per block, where
    /// hashing the mode's name to look it up in ``LoopEngine/commonModeSet`` cost more
    /// than the rest of the check.
    var isCommon: Bool
    private var observerSet = Members<EVObserver>()
    /// The union of the observers' activities: lets a notification with no listener cost
    /// one test (CF's `_observerMask`).
    private(set) var observerMask: UInt = 0
    /// How many observers listen to each activity bit, to keep ``observerMask`` in O(1).
    private var listeners = [Int](repeating: 0, count: UInt.bitWidth)
    /// The mode's timers, ordered by fire date, with the coalesced wake.
    @exclusivity(unchecked) var timers = TimerQueue()
    @exclusivity(unchecked) private var manualSet = Members<EVSource>()
    @exclusivity(unchecked) private var kernelSet = Members<EVSource>()
    @exclusivity(unchecked) private var idleSet = Members<EVSource>()

    init(mode: EVRunLoop.Mode, engine: LoopEngine, isCommon: Bool) {
        self.mode = mode
        self.engine = engine
        self.isCommon = isCommon
    }

    /// The queue holds its timers retained; a mode going away lets them go.
    deinit { timers.releaseAll() }

    /// The observers of each activity bit, sorted as ``observers``; rebuilt when first read
    /// after a change, so that a notification visits only the observers it calls.
    private var byActivity: [[EVObserver]]? = nil

    /// Observers sorted by `order`, equal orders in the order they were added.
    var observers: [EVObserver] { observerSet.elements }

    /// The observers of `activity` (a single activity), sorted as ``observers``.
    func observers(of activity: EVRunLoop.Activity) -> [EVObserver] {
        if byActivity == nil {
            let all = observerSet.elements
            byActivity = (0..<UInt.bitWidth).map { bit in
                all.filter { $0.activities.rawValue & (1 << bit) != 0 }
            }
        }
        return byActivity![activity.rawValue.trailingZeroBitCount]
    }
    /// Whether the mode has manual sources (checked before building their sorted list).
    var hasManualSources: Bool { !manualSet.isEmpty }
    /// Manual sources sorted by `order`, equal orders in the order they were added.
    var manualSources: [EVSource] { manualSet.elements }
    /// Whether the mode has idle sources (checked before building their sorted list).
    var hasIdleSources: Bool { !idleSet.isEmpty }
    /// Idle sources sorted by `order`, equal orders in the order they were added.
    var idleSources: [EVSource] { idleSet.elements }
    /// Descriptor and signal sources, in the order they were added.
    var kernelSources: [EVSource] { kernelSet.elements }
    /// Descriptor and signal sources in no particular order (no sort).
    var unorderedKernelSources: some Sequence<EVSource> { kernelSet.unordered }
    /// When `source` was added to this mode among its descriptor and signal sources (nil
    /// if it is not in it): ready sources fire in this order.
    func kernelSequence(of source: EVSource) -> UInt64? { kernelSet.sequence(of: source) }

    /// True when the mode has nothing that can fire: no timers and no sources.
    /// Observers do not count, as in CF's `__CFRunLoopModeIsEmpty`.
    var hasNoTimersOrSources: Bool {
        timers.isEmpty && manualSet.isEmpty && kernelSet.isEmpty && idleSet.isEmpty
    }

    // MARK: Observers

    func contains(_ observer: EVObserver) -> Bool { observerSet.contains(observer) }

    func insert(_ observer: EVObserver) {
        guard observerSet.insert(observer, order: observer.order) else { return }
        byActivity = nil
        count(observer.activities, by: 1)
    }

    func remove(_ observer: EVObserver) {
        guard observerSet.remove(observer) else { return }
        byActivity = nil
        count(observer.activities, by: -1)
    }

    private func count(_ activities: EVRunLoop.Activity, by step: Int) {
        var bits = activities.rawValue
        while bits != 0 {
            let bit = bits.trailingZeroBitCount
            bits &= bits - 1
            listeners[bit] += step
            if listeners[bit] == 0 { observerMask &= ~(1 << bit) } else { observerMask |= 1 << bit }
        }
    }

    // MARK: Sources

    func contains(_ source: EVSource) -> Bool {
        source.isManual ? manualSet.contains(source) : source.isIdle ? idleSet.contains(source) : kernelSet.contains(source)
    }

    /// Adds `source`; returns false (changing nothing) if it is already in.
    @discardableResult
    func insert(_ source: EVSource) -> Bool {
        if source.isManual { return manualSet.insert(source, order: source.order) }
        if source.isIdle { return idleSet.insert(source, order: source.order) }
        return kernelSet.insert(source)
    }

    func remove(_ source: EVSource) {
        if source.isManual {
            manualSet.remove(source)
        } else if source.isIdle {
            idleSet.remove(source)
        } else {
            kernelSet.remove(source)
        }
    }
}
