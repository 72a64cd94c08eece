#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The engine's part of a timer: its schedule (how the first fire date is given, the fire
/// instant, the flags a firing pass sets) and its out-of-line extras, over the stored
/// properties `Public/EVTimer.swift` declares (a class's stored properties cannot be
/// declared in an extension; their order there is the timer's layout).
///
/// Loop thread only (or the creating thread, before the add), except where noted: see the
/// class's comment on what is safe to share.
extension EVTimer {
    /// How the first fire date is given; resolved on the loop's clock when first added.
    enum Start {
        case afterInterval(Int64)
        case at(Date)
        case instant(Int64)
        /// The first multiple of the interval on the loop's monotonic clock after now.
        case monotonicGrid
        case resolved
    }

    /// The next fire instant once resolved; before that, the payload of ``start``.
    ///
    /// Written on the loop's thread (or the creating thread, before the add). The first
    /// add from another thread reads ``start`` after its claim, to tell whether to wake the
    /// loop; an add of the same timer on the loop's thread may resolve it at that moment.
    /// Relaxed atomic accesses (plain moves, as before) make that read defined: it may see
    /// the start half resolved, which only makes the wake estimate wrong, and the loop's own
    /// add queued the timer already.
    var fireNanos: Int64 {
        get { fireNanosStorage.load(ordering: .relaxed) }
        set { fireNanosStorage.store(newValue, ordering: .relaxed) }
    }

    /// `isFiring`, `fireDateSetInCallout`, `heldByPass` (bits 0–2) and the ``StartKind``
    /// (bits 4–6) in one byte (``bitsStorage``): relaxed atomics, plain moves, for the one
    /// read from elsewhere (see ``fireNanos``).
    private var bits: UInt8 {
        get { bitsStorage.load(ordering: .relaxed) }
        set { bitsStorage.store(newValue, ordering: .relaxed) }
    }

    /// Whether the timer's callout is on the stack. Loop thread only.
    var isFiring: Bool {
        get { bits & Self.firingBit != 0 }
        set { setBit(Self.firingBit, newValue) }
    }
    /// Whether ``fireDate`` was set during the timer's own callout: the date set is kept
    /// instead of the next interval (CF's `oldFireTSR < _fireTSR` test). Loop thread only.
    var fireDateSetInCallout: Bool {
        get { bits & Self.dateSetBit != 0 }
        set { setBit(Self.dateSetBit, newValue) }
    }
    /// Whether a firing pass holds the timer unretained (from before its callout until the
    /// pass is done with it); the queues' releases meanwhile wait, counted in
    /// ``releasesAfterFiring``. Loop thread only.
    var heldByPass: Bool {
        get { bits & Self.heldBit != 0 }
        set { setBit(Self.heldBit, newValue) }
    }
    /// Which case ``start`` is (its payload is in ``fireNanos``).
    private var startKind: StartKind {
        get { StartKind(rawValue: bits >> 4) ?? .resolved }
        set { bits = bits & 0x0F | newValue.rawValue << 4 }
    }

    private static let firingBit: UInt8 = 1, dateSetBit: UInt8 = 2, heldBit: UInt8 = 4

    private func setBit(_ bit: UInt8, _ on: Bool) { bits = on ? bits | bit : bits & ~bit }

    /// The case of ``Start``, stored in three bits of ``bits``.
    private enum StartKind: UInt8 { case afterInterval, at, instant, monotonicGrid, resolved }

    /// How the first fire date is given, until it is resolved: a kind byte and ``fireNanos``.
    var start: Start {
        get {
            switch startKind {
            case .afterInterval: .afterInterval(fireNanos)
            case .at: .at(Date(timeIntervalSinceReferenceDate: Double(bitPattern: UInt64(bitPattern: fireNanos))))
            case .instant: .instant(fireNanos)
            case .monotonicGrid: .monotonicGrid
            case .resolved: .resolved
            }
        }
        set {
            switch newValue {
            case .afterInterval(let nanos): (startKind, fireNanos) = (.afterInterval, nanos)
            case .at(let date):
                (startKind, fireNanos) = (.at, Int64(bitPattern: date.timeIntervalSinceReferenceDate.bitPattern))
            case .instant(let nanos): (startKind, fireNanos) = (.instant, nanos)
            case .monotonicGrid: startKind = .monotonicGrid
            case .resolved: startKind = .resolved  // `fireNanos` holds the resolved instant
            }
        }
    }

    /// The extras at `address` (nil for 0), unretained.
    static func extras(at address: UInt) -> Unmanaged<TimerExtras>? {
        UnsafeRawPointer(bitPattern: address).map { Unmanaged.fromOpaque($0) }
    }

    /// Calls `body` with the timer's extras, if it has any.
    @inline(__always)
    func withExtras<Result>(_ body: (TimerExtras) -> Result) -> Result? {
        Self.extras(at: extrasAddress.load(ordering: .acquiring)).map { body($0.takeUnretainedValue()) }
    }

    /// The timer's extras, made now if it has none. Where the schedule may be written only.
    var madeExtras: Unmanaged<TimerExtras> {
        if let extras = Self.extras(at: extrasAddress.load(ordering: .acquiring)) { return extras }
        let made = Unmanaged.passRetained(
            TimerExtras(label: nil, alignmentOffsetNanos: nil, loopReleased: nil, toleranceNanos: 0))
        let (exchanged, found) = extrasAddress.compareExchange(
            expected: 0, desired: UInt(bitPattern: made.toOpaque()), ordering: .acquiringAndReleasing)
        if exchanged { return made }
        made.release()  // another thread's, made first (a misuse of the schedule, but no leak)
        return Self.extras(at: found)!
    }

    /// How late the timer may fire (ns); 0 for most timers, which then have no extras.
    var toleranceNanos: Int64 {
        get { withExtras { $0.toleranceNanos } ?? 0 }
        set {
            guard newValue != 0 || extrasAddress.load(ordering: .acquiring) != 0 else { return }
            madeExtras.takeUnretainedValue().toleranceNanos = newValue
        }
    }
    /// The end of the tolerance; a fire date at the end of the clock stays there ("never").
    var latestNanos: Int64 { fireNanos.saturatingAdd(toleranceNanos) }
    /// For wall-clock aligned timers: the grid offset in ns; nil for ordinary timers.
    var alignmentOffsetNanos: Int64? { withExtras { $0.alignmentOffsetNanos } ?? nil }
    /// Called when the timer's loop lets go of it for good (the loop is released, or its
    /// thread exited).
    var loopReleased: (@Sendable () -> Void)? { withExtras { $0.loopReleased } ?? nil }

    /// Reschedules to `start` on the loop's thread (or records it as the first fire).
    func move(to start: Start) {
        guard let loop, case .resolved = self.start else {
            self.start = start
            return
        }
        let now = loop.now.nanoseconds
        let target: Int64
        switch start {
        case .instant(let nanos): target = nanos
        case .afterInterval(let nanos): target = now.saturatingAdd(nanos)
        case .at(let date): target = loop.backend.nanos(at: date)
        case .monotonicGrid, .resolved: return
        }
        fireNanos = max(target, now)
        if isFiring { fireDateSetInCallout = true }
        loop.engine.reschedule(self)
    }
}
