/// Everything one mode of one loop holds: its observers, timers and sources.
///
/// The corresponding CF structure is `struct __CFRunLoopMode`.
///
/// Its tables skip Swift's dynamic exclusivity checks: they are touched only on the loop's
/// thread, and every use is a short access that never spans a callout (notifications
/// iterate a copy of `observers`; timer passes re-read the queue after each callout).
final class ModeState {
    let mode: EVRunLoop.Mode
    /// Observers sorted by `order`, equal orders in the order they were added.
    @exclusivity(unchecked) private(set) var observers: [EVObserver] = []
    /// The union of the observers' activities: lets a notification with no listener cost
    /// one test (CF's `_observerMask`).
    @exclusivity(unchecked) private(set) var observerMask: UInt = 0
    /// The mode's timers, ordered by fire date, with the coalesced wake.
    @exclusivity(unchecked) var timers = TimerQueue()
    /// Manual sources sorted by `order`, equal orders in the order they were added.
    @exclusivity(unchecked) private(set) var manualSources: [EVSource] = []
    /// Descriptor and signal sources.
    @exclusivity(unchecked) private(set) var kernelSources: [EVSource] = []

    init(mode: EVRunLoop.Mode) { self.mode = mode }

    /// True when the mode has nothing that can fire: no timers and no sources.
    /// Observers do not count, as in CF's `__CFRunLoopModeIsEmpty`.
    var hasNoTimersOrSources: Bool {
        timers.isEmpty && manualSources.isEmpty && kernelSources.isEmpty
    }

    // MARK: Observers

    func contains(_ observer: EVObserver) -> Bool { observers.contains { $0 === observer } }

    func insert(_ observer: EVObserver) {
        guard !contains(observer) else { return }
        let index = observers.lastIndex { $0.order <= observer.order }.map { $0 + 1 } ?? 0
        observers.insert(observer, at: index)
        observerMask |= observer.activities.rawValue
    }

    func remove(_ observer: EVObserver) {
        guard let index = observers.firstIndex(where: { $0 === observer }) else { return }
        observers.remove(at: index)
        observerMask = observers.reduce(0) { $0 | $1.activities.rawValue }
    }

    // MARK: Sources

    func contains(_ source: EVSource) -> Bool {
        (source.isManual ? manualSources : kernelSources).contains { $0 === source }
    }

    func insert(_ source: EVSource) {
        guard !contains(source) else { return }
        if source.isManual {
            let index = manualSources.lastIndex { $0.order <= source.order }.map { $0 + 1 } ?? 0
            manualSources.insert(source, at: index)
        } else {
            kernelSources.append(source)
        }
    }

    func remove(_ source: EVSource) {
        if source.isManual {
            manualSources.removeAll { $0 === source }
        } else {
            kernelSources.removeAll { $0 === source }
        }
    }
}
