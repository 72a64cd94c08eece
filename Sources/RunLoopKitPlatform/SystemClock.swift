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

    /// Whether the CPU's counter tracks the kernel's monotonic clock, read from the kernel
    /// once per call (``ticksDriveMonotonic(clocksource:cpuFlags:architecture:)``).
    package static func ticksDriveMonotonic() -> Bool {
        ticksDriveMonotonic(
            clocksource: firstLine(of: "/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            cpuFlags: firstLine(of: "/proc/cpuinfo", startingWith: "flags"),
            architecture: .current)
    }

    /// The processor families whose counter the clock can extrapolate.
    package enum CounterArchitecture: Sendable {
        /// `rdtsc`: the kernel's clock source `tsc`.
        case x86_64
        /// `cntvct_el0`, invariant by the architecture: the clock source `arch_sys_counter`.
        case arm64
        /// No counter the library reads.
        case other

        /// This build's.
        package static var current: CounterArchitecture {
            #if arch(x86_64)
            .x86_64
            #elseif arch(arm64)
            .arm64
            #else
            .other
            #endif
        }
    }

    /// Whether the counter tracks the monotonic clock, from what the kernel says: its clock
    /// source is the counter (`tsc` on x86-64, `arch_sys_counter` on arm64), and, on x86-64,
    /// the CPU declares the counter invariant: `constant_tsc` (one rate whatever the core's
    /// frequency) and `nonstop_tsc` (it runs through sleep states) among `/proc/cpuinfo`'s
    /// flags. Otherwise the clock is read every time (`clock_gettime`, as libev's `ev_time`).
    ///
    /// - Parameters:
    ///   - clocksource: the first line of `current_clocksource`; nil when unreadable.
    ///   - cpuFlags: the first `flags` line of `/proc/cpuinfo`; nil when there is none.
    ///   - architecture: the processor family.
    package static func ticksDriveMonotonic(
        clocksource: String?, cpuFlags: String?, architecture: CounterArchitecture
    ) -> Bool {
        let source = clocksource?.split(whereSeparator: \.isWhitespace).first
        switch architecture {
        case .x86_64:
            guard source == "tsc", let cpuFlags else { return false }
            let flags = Set(cpuFlags.split(whereSeparator: { $0.isWhitespace || $0 == ":" }))
            return flags.contains("constant_tsc") && flags.contains("nonstop_tsc")
        case .arm64:
            return source == "arch_sys_counter"
        case .other:
            return false
        }
    }

    /// The first line of the file at `path` that starts with `prefix`, without its
    /// newline; nil when the file cannot be read or has none.
    package static func firstLine(of path: String, startingWith prefix: String = "") -> String? {
        var buffer = [CChar](repeating: 0, count: 16_384)
        let length = clibev_read_line(path, prefix, &buffer, buffer.count)
        guard length >= 0 else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
