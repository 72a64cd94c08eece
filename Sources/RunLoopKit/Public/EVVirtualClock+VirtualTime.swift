import RunLoopKitBackend

/// The virtual clock as the backend layer sees it: plain nanoseconds (`VirtualBackend`
/// waits on it).
extension EVVirtualClock: VirtualTime {
    /// ``now`` in nanoseconds.
    package var nowNanos: Int64 { now.nanoseconds }
    /// The wall clock in nanoseconds since 1970.
    package var wallClockNanos: Int64 { wallNanos }
    /// ``bootPhase`` in nanoseconds.
    package var gridPhaseNanos: Int64 { bootPhase.nanoseconds }
    /// ``advance(to:)`` an instant given in nanoseconds.
    package func advance(toNanos nanos: Int64) { advance(to: EVRunLoop.Instant(nanoseconds: nanos)) }
    /// Whether the wall clock was set since the last call (``setWallClock(to:)``), once.
    package func consumeWallClockChange() -> Bool { takeWallClockChange() }
}
