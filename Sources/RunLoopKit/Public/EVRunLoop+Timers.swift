#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RunLoopKitPlatform

extension EVRunLoop {
    /// Adds `timer` to `mode` (or to every common mode, for ``Mode/common``). Adding it to
    /// another mode of the same loop is fine: it fires once per fire date, in whichever of
    /// its modes is running. The first fire date is resolved on this loop's clock when the
    /// timer is first added. Safe from any thread.
    ///
    /// - Precondition: the timer is valid and not added to another loop.
    ///
    /// - Parameters:
    ///   - timer: the timer; it serves this loop only from now on.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopAddTimer`
    /// (`RunLoop.add(_:forMode:)` in Foundation).
    public func add(_ timer: EVTimer, forMode mode: Mode) {
        let isFirstAdd: Bool
        let onLoopThread = isOwnerThread
        switch timer.link.claim(for: .passUnretained(shared)) {
        case .claimed(let isFirst): isFirstAdd = isFirst
        case .invalidated: misuse("EVRunLoop.add(_:forMode:): timer \(timer.label ?? "") is invalidated")
        case .otherLoop: misuse("EVRunLoop.add(_:forMode:): timer \(timer.label ?? "") belongs to another loop")
        }
        if onLoopThread {
            engine.addOnLoopThread(timer, forMode: mode)
        } else {
            // Only the first add may read the timer's start here: from then on the loop's thread
            // resolves it. A later add wakes the loop if it sleeps at all.
            enqueue({ $0.addOnLoopThread(timer, forMode: mode) },
                    wakingIfSleepingPast: isFirstAdd ? latestFire(of: timer) : .min)
        }
    }

    /// The end of `timer`'s tolerance as this loop will resolve it, estimated on any thread;
    /// `.min` (wake whenever the loop sleeps) when it cannot be told in advance.
    private func latestFire(of timer: EVTimer) -> Int64 {
        let fire: Int64
        switch timer.start {
        case .instant(let nanos): fire = nanos
        case .afterInterval(let nanos) where !timer.isAligned: fire = backend.now().nanoseconds.saturatingAdd(nanos)
        case .at(let date): fire = backend.nanos(at: date)
        default: return .min
        }
        return fire.saturatingAdd(timer.toleranceNanos)
    }

    /// Removes `timer` from `mode` (or every common mode) without invalidating it. Safe
    /// from any thread.
    ///
    /// - Parameters:
    ///   - timer: the timer.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopRemoveTimer`.
    public func remove(_ timer: EVTimer, forMode mode: Mode) {
        if isOwnerThread {
            engine.remove(timer, forMode: mode)
        } else {
            enqueue { $0.remove(timer, forMode: mode) }
        }
    }

    /// Whether `timer` is in `mode` (for ``Mode/common``: whether it was added to it).
    /// Loop thread only.
    ///
    /// - Parameters:
    ///   - timer: the timer.
    ///   - mode: the mode, or ``Mode/common``.
    /// - Returns: whether the timer is in the mode.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopContainsTimer`.
    public func contains(_ timer: EVTimer, inMode mode: Mode) -> Bool {
        checkOwner("contains(_:inMode:)")
        if mode == .common { return engine.commonTimers.contains(timer) }
        return timer.allPlaces.contains { $0.state.mode == mode }
    }

    /// The earliest fire date among the timers of `mode`, or nil if it has none.
    /// Loop thread only.
    ///
    /// - Parameter mode: the mode.
    /// - Returns: the earliest fire date among the mode's timers, or nil when it has none.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopGetNextTimerFireDate`.
    public func nextTimerFireDate(forMode mode: Mode) -> Date? {
        checkOwner("nextTimerFireDate(forMode:)")
        guard let state = engine.modes[mode] else { return nil }
        let earliest = state.timers.allTimers.filter(\.isValid).map(\.fireNanos).min()
        return earliest.map(backend.date(atNanos:))
    }
}
