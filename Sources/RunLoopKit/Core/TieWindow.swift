/// Creation sequences (64-bit, from one process-wide counter) as 32-bit tie-breakers in
/// the same order: a sequence within 2^31 of the first one the queue saw maps to its offset
/// in that window, one before the window to 0, one after it to `UInt32.max`. The map never
/// reverses an order, and two different timers get equal ties only outside the window, so
/// a comparison whose ties are equal reads the timers' full sequences instead. Ties thus
/// compare exactly, and almost always without touching the timers.
struct TieWindow {
    private var base: UInt64?
    /// Whether every tie handed out was inside the window (so no two differ only in their
    /// full sequences): comparisons may then order by (key, tie) alone.
    private(set) var isExact = true

    // Inlined by hand, as `HeapEntry.init`: fewer instructions per create + add
    // (PROFILING.md, "Tricks and what they earn").
    @inline(__always)
    mutating func tie(for sequence: UInt64) -> UInt32 {
        let base = self.base ?? (sequence > (1 << 31) ? sequence - (1 << 31) : 0)
        self.base = base
        let tie = sequence > base ? UInt32(min(sequence - base, UInt64(UInt32.max))) : 0
        if tie == 0 || tie == .max { isExact = false }
        return tie
    }
}
