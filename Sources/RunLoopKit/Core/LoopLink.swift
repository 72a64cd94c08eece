import Synchronization

/// Whether a timer or source is still valid, and the loop it belongs to, kept so that an add
/// and an invalidate on different threads are ordered (CF guards the same pair with the
/// timer's or source's own lock).
///
/// Two atomic words, no lock: `word` holds validity (bit 63) and the owning loop's thread
/// (``EVRunLoop/owner``, a thread id never reused; 0 before the first add), and `signals`
/// the owning loop's ``LoopSignals``, stored once. Both ``claim(for:)`` and the invalidates
/// change `word` with one read-modify-write, so the two are totally ordered:
///
/// - ``claim(for:)`` (in `add`, on the calling thread) stores the loop's signals first (two
///   adds to two loops cannot both succeed: one store wins), then sets the owner in `word`.
///   If `word` was invalid by then, the claim fails, and the invalidate (which came first)
///   removes nothing, nor needs to.
/// - an invalidate sets the invalid bit. If the owner was set before it, the signals were
///   stored before that (release/acquire on `word`): it sees the loop, which removes the
///   object (an add still in the loop's inbox finds it invalid and does nothing).
///
/// The link holds the loop's `LoopSignals` strongly, not the loop: forming a `weak`
/// reference per timer cost about 70 instructions per add; the signals' one weak reference
/// to its loop (``LoopSignals/loop``) answers "is the loop still there".
struct LoopLink: ~Copyable, Sendable {
    /// The outcome of ``claim(for:)``.
    enum Claim {
        /// The loop owns it now; `isFirst` when this claim made it the owner (the first add):
        /// until then no loop touched its schedule; after it, the loop's thread may be
        /// resolving the schedule, and other threads must not read it.
        case claimed(isFirst: Bool)
        case invalidated, otherLoop
    }

    /// The address of the owning loop's signals, retained by the link (released in
    /// `deinit`); 0 before the first claim. Stored once. (`AtomicLazyReference` does the
    /// same, but its generic calls are not inlined here: 60 more instructions per add.)
    private let signals = Atomic<UInt>(0)
    private let word = Atomic<UInt64>(0)
    private static let invalidBit: UInt64 = 1 << 63

    deinit {
        if let stored = Self.signals(at: signals.load(ordering: .acquiring)) { stored.release() }
    }

    var isValid: Bool { word.load(ordering: .acquiring) & Self.invalidBit == 0 }

    /// Whether a loop ever claimed it (so that ``invalidate(from:)`` needs the caller's thread).
    var wasClaimed: Bool { word.load(ordering: .acquiring) & ~Self.invalidBit != 0 }

    /// The loop this belongs to; nil before the first add, or once that loop is gone.
    var loop: EVRunLoop? {
        Self.signals(at: signals.load(ordering: .acquiring))?.takeUnretainedValue().loop
    }

    /// The signals whose address is `address` (nil for 0).
    private static func signals(at address: UInt) -> Unmanaged<LoopSignals>? {
        UnsafeRawPointer(bitPattern: address).map { Unmanaged.fromOpaque($0) }
    }

    /// Stores `candidate` as the owning loop's signals unless some are stored already;
    /// returns whether the stored ones are `candidate`'s.
    private func store(_ candidate: LoopSignals) -> Bool {
        let mine = UInt(bitPattern: Unmanaged.passUnretained(candidate).toOpaque())
        let current = signals.load(ordering: .acquiring)
        if current != 0 { return current == mine }
        let retained = Unmanaged.passRetained(candidate)  // the link's reference
        let (exchanged, stored) = signals.compareExchange(
            expected: 0, desired: mine, ordering: .acquiringAndReleasing)
        if exchanged { return true }
        retained.release()  // another claim stored first
        return stored == mine
    }

    /// Checks validity and makes `loop` the owner, unless another loop is (a loop that
    /// claimed it and is gone since still counts: an object serves one loop only, as in CF).
    func claim(for loop: EVRunLoop) -> Claim {
        guard isValid else { return .invalidated }
        guard store(loop.signals) else { return .otherLoop }
        let old = word.bitwiseOr(loop.owner & ~Self.invalidBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.invalidBit == 0 else { return .invalidated }
        return .claimed(isFirst: old == 0)
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

    /// Marks it invalid, like ``invalidate()``, without reading the loop when `thread` owns it.
    func invalidate(from thread: UInt64) -> Invalidation {
        let old = word.bitwiseOr(Self.invalidBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.invalidBit == 0 else { return .unchanged }
        if old == 0 { return .elsewhere(nil) }
        return old == thread ? .onOwnerThread : .elsewhere(loop)
    }

    /// Marks it invalid. Returns false if it already was; otherwise true and the loop it
    /// belongs to (nil if none), which must remove it.
    func invalidate() -> (changed: Bool, loop: EVRunLoop?) {
        let old = word.bitwiseOr(Self.invalidBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.invalidBit == 0 else { return (false, nil) }
        return (true, old == 0 ? nil : loop)
    }
}
