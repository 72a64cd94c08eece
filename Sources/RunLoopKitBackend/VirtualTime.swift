/// The clock a virtual backend waits on, in nanoseconds: the core's `EVVirtualClock`
/// conforms, so that this module names nothing of the core.
///
/// No CF or libev counterpart: swift-nio's `EmbeddedEventLoop` keeps such a clock.
package protocol VirtualTime: AnyObject, Sendable {
    /// The monotonic reading (ns).
    var nowNanos: Int64 { get }
    /// The wall clock's reading (ns since 1970).
    var wallClockNanos: Int64 { get }
    /// The phase of the shared wake grid on this clock (ns).
    var gridPhaseNanos: Int64 { get }
    /// Moves the clock forward to `nanos`, if it is later than now.
    func advance(toNanos nanos: Int64)
    /// Whether the wall clock was set since the last call (reported once).
    func consumeWallClockChange() -> Bool
}
