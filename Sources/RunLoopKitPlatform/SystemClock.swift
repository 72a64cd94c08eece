// Public: the `@inlinable` bodies below call the shim, and compile into the caller.
public import CRunLoopKitLibev

/// The kernel's clocks, the platform's part: `CLOCK_MONOTONIC` and `CLOCK_REALTIME` in
/// nanoseconds (`clock_gettime`, through the C shim), and whether the monotonic clock counts
/// the CPU's own counter (what ``CycleClock`` extrapolates from).
///
/// The corresponding libev calls are `ev_time` and `ev_now_update`'s `clock_gettime`; GLib's
/// are `g_get_monotonic_time` and `g_get_real_time`.
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the module above (ARCHITECTURE.md, "Layers").
@usableFromInline package enum SystemClock {
    /// `CLOCK_MONOTONIC` now, in nanoseconds.
    @inlinable
    package static func monotonicNanoseconds() -> Int64 { clibev_monotonic_ns() }

    /// `CLOCK_REALTIME` now, in nanoseconds since 1970.
    @inlinable
    package static func realtimeNanoseconds() -> Int64 { clibev_realtime_ns() }

    /// Whether the kernel's clock source is the CPU's counter (`tsc` on x86-64,
    /// `arch_sys_counter` on arm64): only then does the counter track the monotonic clock.
    package static func ticksDriveMonotonic() -> Bool { clibev_ticks_drive_monotonic() != 0 }
}
