/// A timer's slot in one mode's ``TimerQueue``. The mode state is unowned: a loop never
/// drops a mode state while its queue holds timers (its teardown empties every list).
struct TimerPlace {
    private let unmanagedState: Unmanaged<ModeState>
    let slot: Int32

    init(state: ModeState, slot: Int32) {
        unmanagedState = .passUnretained(state)
        self.slot = slot
    }

    var state: ModeState { unmanagedState.takeUnretainedValue() }

    /// Whether this place is in `state` (an identity test, without reference counting).
    func isIn(_ state: ModeState) -> Bool {
        unmanagedState.toOpaque() == Unmanaged.passUnretained(state).toOpaque()
    }

    /// Calls `body` with the engine of the mode state, without reference counting (the
    /// engine is alive while its queue holds the timer).
    func withEngine(_ body: (LoopEngine) -> Void) {
        unmanagedState._withUnsafeGuaranteedRef { state in
            Unmanaged.passUnretained(state.engine)._withUnsafeGuaranteedRef(body)
        }
    }

    /// Calls `body` with the mode state's queue and the slot, without reference counting.
    func withQueue(_ body: (inout TimerQueue, Int32) -> Void) {
        unmanagedState._withUnsafeGuaranteedRef { body(&$0.timers, slot) }
    }
}

/// Where a timer sits: one place per mode it is in. The first sits inline in the timer
/// (``EVTimer/firstPlace``: most timers are in one mode, and a fire reaches its queue
/// there); the others in its ``TimerExtras``, made when a second mode comes. Loop thread only.
extension EVTimer {
    /// Whether the timer is in more than one mode.
    var hasOtherPlaces: Bool { withExtras { !$0.otherPlaces.isEmpty } ?? false }

    /// The places after the first.
    var otherPlaces: [TimerPlace] { withExtras { $0.otherPlaces } ?? [] }

    /// The place in `state`'s queue, if any.
    func place(in state: ModeState) -> TimerPlace? {
        // Places fill `firstPlace` first (and a removal refills it): none there, none at all.
        guard let firstPlace else { return nil }
        if firstPlace.isIn(state) { return firstPlace }
        return withExtras { $0.otherPlaces.first { $0.isIn(state) } } ?? nil
    }

    func appendPlace(_ place: TimerPlace) {
        if firstPlace == nil {
            firstPlace = place
        } else {
            appendOtherPlace(place)
        }
    }

    /// A place after the first, in the extras (made now if need be). Out of line: the add
    /// inlines ``appendPlace(_:)``, and most timers are in one mode.
    @inline(never)
    private func appendOtherPlace(_ place: TimerPlace) {
        madeExtras.takeUnretainedValue().otherPlaces.append(place)
    }

    /// Removes and returns the place in `state`'s queue, if any.
    func removePlace(in state: ModeState) -> TimerPlace? {
        if let place = firstPlace, place.isIn(state) {
            firstPlace = withExtras { $0.otherPlaces.isEmpty ? nil : $0.otherPlaces.removeFirst() } ?? nil
            return place
        }
        return withExtras { extras in
            extras.otherPlaces.firstIndex { $0.isIn(state) }.map { extras.otherPlaces.remove(at: $0) }
        } ?? nil
    }

    func removeAllPlaces() {
        firstPlace = nil
        withExtras { if !$0.otherPlaces.isEmpty { $0.otherPlaces = [] } }  // the empty array needs no release
    }

    /// Every place.
    var allPlaces: [TimerPlace] { firstPlace.map { [$0] + otherPlaces } ?? [] }
}
