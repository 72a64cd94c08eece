/// Where a timer sits: one slot per mode it is in. The first sits inline (most timers are
/// in one mode), so a timer in one mode allocates nothing for it.
struct TimerPlaces {
    /// A timer's slot in one mode's ``TimerQueue``. The mode state is unowned: a loop never
    /// drops a mode state while its queue holds timers (its teardown empties every list).
    struct Place {
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

    // `others` first: the 12-byte `first` then ends the struct, so a timer's flags pack
    // right after it.
    private(set) var others: [Place] = []
    private(set) var first: Place?

    var isEmpty: Bool { first == nil }
    /// Whether the timer is in more than one mode.
    var hasOthers: Bool { !others.isEmpty }

    /// The place in `state`'s queue, if any.
    func place(in state: ModeState) -> Place? {
        if let first, first.isIn(state) { return first }
        return others.first { $0.isIn(state) }
    }

    mutating func append(_ place: Place) {
        if first == nil { first = place } else { others.append(place) }
    }

    /// Removes and returns the place in `state`'s queue, if any.
    mutating func remove(in state: ModeState) -> Place? {
        if let place = first, place.isIn(state) {
            first = others.isEmpty ? nil : others.removeFirst()
            return place
        }
        guard let index = others.firstIndex(where: { $0.isIn(state) }) else { return nil }
        return others.remove(at: index)
    }

    mutating func removeAll() {
        first = nil
        if !others.isEmpty { others = [] }  // the empty array needs no release
    }

    /// Calls `body` with each place (it must not add or remove places of this timer).
    func forEach(_ body: (Place) -> Void) {
        guard let first else { return }
        body(first)
        guard !others.isEmpty else { return }
        for place in others { body(place) }
    }

    /// Every place.
    var all: [Place] { first.map { [$0] + others } ?? [] }
}
