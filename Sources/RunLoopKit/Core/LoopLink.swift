import Synchronization

/// Whether a timer or source is still valid, and the loop it belongs to, kept so that an add
/// and an invalidate on different threads are ordered (CF guards the same pair with the
/// timer's or source's own lock).
///
/// One atomic word, no lock: the address of the owning loop's ``LoopShared`` (0 before the
/// first add; stored once, held by the link through ``LoopShared/linked()`` and let go of
/// in its `deinit`), with bit 0 set once invalidated (an object's address has its low bits
/// clear). ``claim(for:)``
/// changes the word with one read-modify-write, and so does an invalidate of an unclaimed
/// word; once claimed, the word can only gain the invalid bit, which a timer's invalidate
/// sets with a plain store (see ``invalidate(from:)``). Each invalidate is thus ordered with
/// each claim:
///
/// - ``claim(for:)`` (in `add`, on the calling thread) swaps 0 for the loop's shared state. If
///   the word was invalid by then, the claim fails, and the invalidate (which came first)
///   removes nothing, nor needs to; if it held another loop's shared state, the object belongs to
///   that loop (two adds to two loops cannot both succeed: one swap wins).
/// - an invalidate sets bit 0. If a loop's shared state was stored before it, it sees it and
///   so the loop, which removes the object (an add still in the loop's inbox finds it
///   invalid and does nothing).
///
/// The link keeps the loop's `LoopShared` alive, not the loop: forming a `weak`
/// reference per timer costs an add more instructions (PROFILING.md); the shared state's one weak
/// reference to its loop (``LoopShared/loop``) answers "is the loop still there", and it
/// knows the loop's thread (``LoopShared/owner``).
struct LoopLink: ~Copyable, Sendable {
    /// The outcome of ``claim(for:)``.
    enum Claim {
        /// The loop owns it now; `isFirst` when this claim made it the owner (the first add):
        /// until then no loop touched its schedule; after it, the loop's thread may be
        /// resolving the schedule, and other threads must not read it.
        case claimed(isFirst: Bool)
        case invalidated, otherLoop
    }

    /// The address of the owning loop's shared state (kept alive by the link's hold), and the
    /// invalid bit.
    /// (`AtomicLazyReference` could hold the address, but its generic calls are not
    /// inlined here: an add then costs more instructions, PROFILING.md.)
    private let word = Atomic<UInt>(0)
    private static let invalidBit: UInt = 1

    deinit {
        Self.shared(in: word.load(ordering: .acquiring))?.takeUnretainedValue().unlinked()
    }

    var isValid: Bool { word.load(ordering: .acquiring) & Self.invalidBit == 0 }

    /// The loop this belongs to; nil before the first add, or once that loop is gone.
    var loop: EVRunLoop? {
        Self.shared(in: word.load(ordering: .acquiring))?.takeUnretainedValue().loop
    }

    /// The shared state whose address `word` holds (nil for none).
    private static func shared(in word: UInt) -> Unmanaged<LoopShared>? {
        UnsafeRawPointer(bitPattern: word & ~invalidBit).map { Unmanaged.fromOpaque($0) }
    }

    /// Checks validity and makes the loop whose shared state is `shared` the owner, unless
    /// another loop is (a loop that claimed it and is gone since still counts: an object
    /// serves one loop only, as in CF). (`shared` unmanaged: as a reference, it costs a
    /// retain and a release per add.)
    // Inlined by hand (PROFILING.md, "Tricks and what they earn").
    @inline(__always)
    func claim(for shared: Unmanaged<LoopShared>) -> Claim {
        let mine = UInt(bitPattern: shared.toOpaque())
        let current = word.load(ordering: .acquiring)
        guard current == 0 else { return Self.claim(found: current, mine: mine) }
        shared._withUnsafeGuaranteedRef { $0.linked() }  // the link's hold, taken before the address is published
        let (exchanged, found) = word.compareExchange(expected: 0, desired: mine, ordering: .acquiringAndReleasing)
        if exchanged { return .claimed(isFirst: true) }
        shared.takeUnretainedValue().unlinked()  // an invalidate or another claim came first
        return Self.claim(found: found, mine: mine)
    }

    /// The outcome of a claim that found the word already set to `found`.
    private static func claim(found: UInt, mine: UInt) -> Claim {
        if found & invalidBit != 0 { return .invalidated }
        return found == mine ? .claimed(isFirst: false) : .otherLoop
    }

    /// How ``invalidate(from:)`` went.
    enum Invalidation {
        /// It was invalid already.
        case unchanged
        /// It was valid, and `thread` (the caller's) owns its loop: the caller finds the
        /// loop without going through the link.
        case onOwnerThread
        /// It was valid; the loop it belongs to (nil if none, or gone), which must remove it.
        case elsewhere(EVRunLoop?)
    }

    /// Marks it invalid, like ``invalidate()``, without reading the loop when the calling
    /// thread (`thread`, asked only once a loop claimed it) owns it.
    ///
    /// Once claimed, the word can only change by gaining the invalid bit (claims swap 0
    /// only), so a plain releasing store of it sets the bit with no locked instruction, which
    /// on x86 would also wait for every pending store and cache miss. Two invalidates racing
    /// then may both see the word valid and both remove the timer, which is harmless: a
    /// removal finds nothing the second time. An unclaimed word still takes a
    /// read-modify-write, since a claim may race it.
    func invalidate(from thread: () -> UInt64) -> Invalidation {
        let current = word.load(ordering: .acquiring)
        guard current & Self.invalidBit == 0 else { return .unchanged }
        let shared: Unmanaged<LoopShared>
        if let claimed = Self.shared(in: current) {
            word.store(current | Self.invalidBit, ordering: .releasing)
            shared = claimed
        } else {
            let old = word.bitwiseOr(Self.invalidBit, ordering: .acquiringAndReleasing).oldValue
            guard old & Self.invalidBit == 0 else { return .unchanged }
            guard let claimed = Self.shared(in: old) else { return .elsewhere(nil) }
            shared = claimed
        }
        return shared._withUnsafeGuaranteedRef { $0.owner == thread() ? .onOwnerThread : .elsewhere($0.loop) }
    }

    /// Marks it invalid. Returns false if it already was; otherwise true and the loop it
    /// belongs to (nil if none), which must remove it. Always a read-modify-write, so exactly
    /// one caller sees true: a source closes the descriptor it owns once (unlike a timer's
    /// removal, which ``invalidate(from:)`` may run twice).
    func invalidate() -> (changed: Bool, loop: EVRunLoop?) {
        let old = word.bitwiseOr(Self.invalidBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.invalidBit == 0 else { return (false, nil) }
        return (true, Self.shared(in: old)?.takeUnretainedValue().loop)
    }
}
