import RunLoopKitPlatform

/// A backend on libev (`ev_loop_new`): the real loop, with its eventfd and timerfds.
///
/// - Throws: the failed call (`ev_loop_new`, `eventfd`, `timerfd_create`) and its `errno`.
///
/// CFRunLoop's counterpart is the run loop's port set made in `__CFRunLoopCreate`; libev's is
/// `ev_loop_new`.
package func makeLibevBackend() throws(SystemCallError) -> any Backend {
    try LibevBackend()
}

/// A backend on a virtual clock: a wait with a deadline moves `clock` to it and returns at
/// once; a wait without one blocks until a wake. It has no kernel watches.
///
/// - Parameter clock: the time it waits on (the core's `EVVirtualClock`).
///
/// No CF or libev counterpart: the virtual clock is RunLoopKit's own.
package func makeVirtualBackend(clock: any VirtualTime) -> any Backend {
    VirtualBackend(clock: clock)
}

extension Backend {
    /// The virtual clock this backend waits on; nil for the real loop.
    package var virtualTime: (any VirtualTime)? { (self as? VirtualBackend)?.clock }
}
