/// A heap entry of ``TimerQueue``, 16 bytes as libev's: the key (fire instant, or fire +
/// tolerance), the timer's tie-breaker (its creation order, see ``TieWindow``) and its
/// record's slot, packed into one 128-bit number whose order is the order of (key, tie).
/// A heap comparison is then one 128-bit compare, without branches, even among timers made
/// for one date.
struct HeapEntry {
    /// The key with its sign bit flipped (so it orders as unsigned) in bits 64–127, the tie
    /// in bits 32–63, the slot in bits 0–31.
    private(set) var rank: UInt128

    // Inlined by hand: without it a create + add costs more instructions (PROFILING.md,
    // "Tricks and what they earn").
    @inline(__always)
    init(key: Int64, slot: Int32, tie: UInt32) {
        rank = UInt128(UInt64(bitPattern: key) ^ Self.signBit) << 64
            | UInt128(tie) << 32 | UInt128(UInt32(bitPattern: slot))
    }

    private static let signBit: UInt64 = 1 << 63

    var key: Int64 {
        @inline(__always) get { Int64(bitPattern: UInt64(truncatingIfNeeded: rank >> 64) ^ Self.signBit) }
        @inline(__always) set { rank = UInt128(UInt64(bitPattern: newValue) ^ Self.signBit) << 64 | rank & UInt128(UInt64.max) }
    }

    var slot: Int32 { Int32(bitPattern: UInt32(truncatingIfNeeded: rank)) }

    var tie: UInt32 { UInt32(truncatingIfNeeded: rank >> 32) }

    /// Whether this is a hole left in a ``SortedRun`` (slot -1; no queued timer has it).
    var isHole: Bool { slot == -1 }

    /// Makes this entry a hole: its slot becomes -1, its key stays.
    mutating func makeHole() { rank |= UInt128(UInt32.max) }
}
