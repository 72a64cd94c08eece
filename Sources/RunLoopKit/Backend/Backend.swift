#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the core asks of the thing that waits: clocks, a bounded wait, a wake from any
/// thread, and readiness of file descriptors and POSIX signals.
///
/// Two implementations: ``LibevBackend`` (the real loop) and ``VirtualBackend`` (a manual
/// clock for tests). The core never sees libev; only `LibevBackend.swift` imports it.
protocol Backend: AnyObject, Sendable {
    /// The monotonic clock.
    func now() -> EVRunLoop.Instant
    /// The wall clock.
    func wallNow() -> Date
    /// The wall clock in nanoseconds since 1970, exact (a `Date` keeps only ~0.2 µs).
    func wallNanos() -> Int64
    /// Waits until `deadline`, until a watched descriptor or signal is ready, or until
    /// ``wakeUp()`` is called (a wake sent before the wait ends it at once). `deadline` at
    /// or before now polls: readiness is collected without sleeping. Readiness is reported
    /// to `events` from inside this call, on the loop's thread. `precise` asks for the wake
    /// to land as close to `deadline` as the backend can (a zero-tolerance timer is due).
    func wait(until deadline: EVRunLoop.Instant, precise: Bool, events: any BackendEvents)
    /// Ends the current or next ``wait(until:precise:events:)`` early. Safe from any thread.
    func wakeUp()

    /// Whether this backend can watch descriptors and signals (the virtual one cannot).
    var watchesKernelEvents: Bool { get }
    /// Starts reporting readiness of `fd` for `writing` (else reading) under `token`.
    func watch(fd: Int32, writing: Bool, token: ObjectIdentifier)
    /// Stops reporting readiness for `token`.
    func unwatch(fd token: ObjectIdentifier)
    /// Starts catching `signal` and reporting it under `token`.
    func watch(signal: Int32, token: ObjectIdentifier)
    /// Stops catching the signal registered under `token`.
    func unwatch(signal token: ObjectIdentifier)
}

/// Where a backend reports what it saw during a wait.
protocol BackendEvents: AnyObject {
    /// A watched descriptor is ready.
    func descriptorReady(_ token: ObjectIdentifier)
    /// A watched signal arrived.
    func signalArrived(_ token: ObjectIdentifier)
    /// The wall clock was set (not slewed): wall-aligned deadlines must be recomputed.
    func wallClockChanged()
}
