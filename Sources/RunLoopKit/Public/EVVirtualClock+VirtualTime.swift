import RunLoopKitBackend

/// The virtual clock as the backend layer sees it: plain nanoseconds (`VirtualBackend`
/// waits on it).
extension EVVirtualClock: VirtualTime {
    package var nowNanos: Int64 { now.nanoseconds }
    package var wallClockNanos: Int64 { wallNanos }
    package var gridPhaseNanos: Int64 { bootPhase.nanoseconds }
    package func advance(toNanos nanos: Int64) { advance(to: EVRunLoop.Instant(nanoseconds: nanos)) }
    package func consumeWallClockChange() -> Bool { takeWallClockChange() }
}
