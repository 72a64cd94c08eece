#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Timers on the loop's thread: adding, rescheduling, firing (CF's `__CFRunLoopDoTimers`
/// and `__CFRunLoopDoTimer`), and wall-clock re-alignment.
extension LoopEngine {
    /// The add itself, once ``add(_:forMode:)-(EVTimer,_)`` made this loop the timer's own.
    /// An invalidate that comes later (even during this call) finds the loop and removes the
    /// timer; one that came first, while the add was in the inbox, makes this a no-op.
    // Inlined by hand into `EVRunLoop.add` (PROFILING.md, "Tricks and what they earn").
    @inline(__always)
    func addOnLoopThread(_ timer: EVTimer, forMode mode: Mode) {
        guard timer.isValid else { return }
        resolveStart(of: timer)
        if timer.isAligned { alignedTimers[ObjectIdentifier(timer)] = timer }
        if let state = lastTimerState, lastTimerMode == mode {
            state._withUnsafeGuaranteedRef { insert(timer, into: $0) }
            return
        }
        let resolved = resolve(mode)
        if !resolved.isCommon, let state = resolved.states.first {
            (lastTimerMode, lastTimerState) = (mode, .passUnretained(state))
        }
        if resolved.isCommon { commonTimers.insert(timer) }
        for state in resolved.states { insert(timer, into: state) }
    }

    // One call with the queue's insert inlined in it, where the add's mode cache reached
    // it through a closure (`_withUnsafeGuaranteedRef`, too large to inline) that then called
    // the queue: fewer instructions per create + add (PROFILING.md, "Tricks and what they
    // earn").
    @inline(never)
    func insert(_ timer: EVTimer, into state: ModeState) {
        guard timer.place(in: state) == nil else { return }
        timer.appendPlace(TimerPlace(state: state, slot: state.timers.insert(timer)))
    }

    /// ``EVRunLoop/remove(_:forMode:)-(EVTimer,_)`` on the loop's thread.
    func remove(_ timer: EVTimer, forMode mode: Mode) {
        if mode == .common { commonTimers.remove(timer) }
        for state in states(for: mode) { remove(timer, from: state) }
    }

    func remove(_ timer: EVTimer, from state: ModeState) {
        guard let place = timer.removePlace(in: state) else { return }
        state.timers.remove(place.slot, of: timer)
    }

    func removeEverywhere(_ timer: EVTimer) {
        if !commonTimers.isEmpty { commonTimers.remove(timer) }
        if timer.isAligned { alignedTimers[ObjectIdentifier(timer)] = nil }
        guard let first = timer.firstPlace else { return }
        if timer.hasOtherPlaces {
            let places = timer.allPlaces
            timer.removeAllPlaces()
            withExtendedLifetime(timer) { for place in places { place.withQueue { $0.remove($1, of: timer) } } }
        } else {
            timer.firstPlace = nil
            withExtendedLifetime(timer) { first.withQueue { $0.remove($1, of: timer) } }
        }
    }

    /// Re-sorts `timer` in every mode after its fire date or tolerance changed.
    func reschedule(_ timer: EVTimer) {
        timer.firstPlace?.withQueue { queue, slot in queue.update(slot) }
        guard timer.hasOtherPlaces else { return }
        for place in timer.otherPlaces { place.withQueue { queue, slot in queue.update(slot) } }
    }

    /// Turns the timer's requested start into an instant of this loop's clock.
    ///
    /// An interval starts at the add, read late by at most 1/256 of it and 4 µs (never
    /// early): the backend may then answer from the CPU's counter instead of the clock
    /// (``Backend/now(lateBy:)``), which spares most adds a clock read. Intervals under about
    /// 0.5 ms start at a clock reading.
    // Inlined by hand (PROFILING.md, "Tricks and what they earn").
    @inline(__always)
    private func resolveStart(of timer: EVTimer) {
        switch timer.start {
        case .afterInterval(let nanos):
            timer.fireNanos = timer.isAligned
                ? nextAlignedFire(of: timer)
                : backend.now(lateBy: min(nanos / 256, 4_000)).nanoseconds.saturatingAdd(nanos)
        case .at(let date):
            timer.fireNanos = backend.nanos(at: date)
        case .instant(let nanos):
            timer.fireNanos = nanos
        case .monotonicGrid:
            timer.fireNanos = nextGridPoint(period: timer.intervalNanos)
        case .resolved:
            return
        }
        timer.start = .resolved
    }

    /// The first multiple of `period` on the loop's monotonic clock after now.
    func nextGridPoint(period: Int64) -> Int64 {
        (backend.now().nanoseconds.dividedFloor(by: period) + 1) * period
    }

    /// The instant (ns) of the first wall-clock grid point `k * interval + offset` after
    /// now, for an aligned timer.
    func nextAlignedFire(of timer: EVTimer) -> Int64 {
        let now = backend.now().nanoseconds
        let wallNanos = backend.wallNanos()
        let interval = timer.intervalNanos
        let offset = timer.alignmentOffsetNanos ?? 0
        let steps = (wallNanos - offset).dividedFloor(by: interval) + 1
        let target = steps * interval + offset
        return now + (target - wallNanos)
    }

    /// After `settimeofday`: moves every aligned timer that is not yet due to the new wall
    /// clock's grid (a due one fires now and then follows the grid by itself).
    func realignTimers() {
        wallClockWasSet = false
        let now = backend.now().nanoseconds
        for timer in alignedTimers.values where !timer.isFiring && timer.fireNanos > now {
            timer.fireNanos = nextAlignedFire(of: timer)
            reschedule(timer)
        }
    }

    /// CF's `__CFRunLoopDoTimers`: fires, in fire order, the timers of `state` that were due
    /// at the wake, skipping any invalidated, removed or already firing meanwhile.
    func fireDueTimers(_ state: ModeState) {
        guard let wake = lastWakeInstant?.nanoseconds else { return }
        // Every pass counts (a nested run's passes end the outer pass's snapshot, as before),
        // but one with nothing due skips the search.
        state.timers.beginFiringPass()
        guard state.timers.hasDue(at: wake) else { return }
        // With a trace or metrics: the clock's reading at the end of the last callout, the
        // start of the next (its rescheduling and the queue's search count to the next).
        var chain: Int64 = .min
        while let timer = state.timers.nextDue(at: wake) {
            // Unretained (the queue owns it): a queue letting go of it meanwhile leaves the
            // release to this pass, done once the fire is over.
            let releases = timer._withUnsafeGuaranteedRef { timer in
                timer.heldByPass = true
                chain = fire(timer, after: chain)
                timer.heldByPass = false
                defer { timer.releasesAfterFiring = 0 }
                return timer.releasesAfterFiring
            }
            for _ in 0..<releases { timer.release() }
        }
    }

    /// CF's `__CFRunLoopDoTimer`: the callout, then the next fire date. A repeating timer's
    /// next date is the first `old + k * interval` after now, unless the callout set the
    /// fire date, which is kept (CF clamps a past date to now, later than the fire served);
    /// a one-shot timer is invalidated.
    /// `chain`: the end of the callout just before (``endCallout(_:_:)``); returns this one's.
    private func fire(_ timer: EVTimer, after chain: Int64) -> Int64 {
        let scheduled = timer.fireNanos
        timer.fireDateSetInCallout = false
        timer.isFiring = true
        stats.timerFires += 1
        let end: Int64
        if trace == nil && stallWatch == nil {
            if let measuring {
                end = fireMeasured(timer, measuring, due: scheduled, after: chain)
            } else {
                timer.block(timer)
                end = .min
            }
        } else {
            let mark = beginCallout(.timer(timer.label ?? "timer"), kind: .timer, due: scheduled, after: chain)
            timer.block(timer)
            end = endWatchedCallout(mark, timer: timer)
        }
        timer.isFiring = false
        guard timer.isValid else { return end }
        guard timer.repeats else {
            timer.invalidate()
            return end
        }
        if !timer.fireDateSetInCallout {
            if timer.isAligned {
                // The wall clock may read a hair before the grid point the monotonic deadline
                // stood for (the two clocks are slewed apart by NTP); never serve the same
                // grid point twice.
                var next = nextAlignedFire(of: timer)
                if next - scheduled < min(timer.intervalNanos / 2, 1_000_000) { next += timer.intervalNanos }
                timer.fireNanos = next
            } else {
                // The first grid point after now, which the backend tells without reading
                // the clock when it can.
                timer.fireNanos = backend.nextGridPoint(
                    after: Instant(nanoseconds: scheduled), every: timer.intervalNanos).nanoseconds
            }
        }
        reschedule(timer)
        return end
    }
}

extension Int64 {
    /// Division rounding toward negative infinity.
    func dividedFloor(by divisor: Int64) -> Int64 {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return (r != 0 && (r < 0) != (divisor < 0)) ? q - 1 : q
    }
}
