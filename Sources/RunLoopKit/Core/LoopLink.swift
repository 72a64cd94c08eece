import Synchronization

/// Whether a timer or source is still valid, and the loop it belongs to: the two change
/// together under one lock, so that an add and an invalidate on different threads are
/// ordered (CF guards the same pair with the timer's or source's own lock).
///
/// - ``claim(for:)`` (in `add`, on the calling thread) checks validity and takes the loop
///   at once: two adds to two loops cannot both succeed, and an invalidate either comes
///   first (the add is refused) or sees the loop (and removes the timer from it).
/// - ``invalidate()`` clears validity and reports the loop it saw.
///
/// ``isValid`` is also kept in an atomic word, written only under the lock, so the loop's
/// hot paths read it without locking; the word also holds the owning loop's thread, so an
/// invalidate on that thread needs no strong reference loaded from `weak`.
struct LoopLink: ~Copyable, Sendable {
    /// The outcome of ``claim(for:)``.
    enum Claim { case claimed, invalidated, otherLoop }

    private let state = Mutex(LoopLinkState())
    /// Bit 63 set: invalid. Bits 0–62: the ``EVRunLoop/owner`` of the loop (0 before the
    /// first add), a thread id that is never reused.
    private let word = Atomic<UInt64>(0)
    private static let invalidBit: UInt64 = 1 << 63

    var isValid: Bool { word.load(ordering: .acquiring) & Self.invalidBit == 0 }

    /// Whether a loop ever claimed it (so that ``invalidate(from:)`` needs the caller's thread).
    var wasClaimed: Bool { word.load(ordering: .acquiring) & ~Self.invalidBit != 0 }

    /// The loop this belongs to; nil before the first add (or once that loop is gone).
    var loop: EVRunLoop? { state.withLock { $0.loop } }

    /// Checks validity and makes `loop` the owner, unless another loop is.
    func claim(for loop: EVRunLoop) -> Claim {
        state.withLock { state in
            guard word.load(ordering: .relaxed) & Self.invalidBit == 0 else { return .invalidated }
            if let owner = state.loop { return owner === loop ? .claimed : .otherLoop }
            state.loop = loop
            word.store(loop.owner & ~Self.invalidBit, ordering: .releasing)
            return .claimed
        }
    }

    /// How ``invalidate(from:)`` went.
    enum Invalidation {
        /// It was invalid already.
        case unchanged
        /// It was valid, and `thread` (the caller's) owns its loop: the caller finds the
        /// loop without a strong reference through `weak`.
        case onOwnerThread
        /// It was valid; the loop it belongs to (nil if none, or gone), which must remove it.
        case elsewhere(EVRunLoop?)
    }

    /// Marks it invalid, like ``invalidate()``, without reading the loop when `thread` owns it.
    func invalidate(from thread: UInt64) -> Invalidation {
        state.withLock { state in
            let old = word.bitwiseOr(Self.invalidBit, ordering: .acquiringAndReleasing).oldValue
            guard old & Self.invalidBit == 0 else { return .unchanged }
            return old != 0 && old == thread ? .onOwnerThread : .elsewhere(state.loop)
        }
    }

    /// Marks it invalid. Returns false if it already was; otherwise true and the loop it
    /// belongs to (nil if none), which must remove it.
    func invalidate() -> (changed: Bool, loop: EVRunLoop?) {
        state.withLock { state in
            let old = word.bitwiseOr(Self.invalidBit, ordering: .acquiringAndReleasing).oldValue
            guard old & Self.invalidBit == 0 else { return (false, nil) }
            return (true, state.loop)
        }
    }
}

/// ``LoopLink``'s locked part (a top-level type: nested in the non-copyable struct, it
/// crashes the Swift 6.3 compiler).
struct LoopLinkState {
    weak var loop: EVRunLoop?
}
