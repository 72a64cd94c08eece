import RunLoopKitPlatform
import Testing

/// When the loop may extrapolate the clock from the CPU's counter (``CycleClock``), and
/// when it falls back to reading `clock_gettime` every time.
@Suite("Counter fallback")
struct CounterFallbackTests {
    private static let invariantFlags = "flags\t\t: fpu vme tsc msr rdtscp constant_tsc nonstop_tsc tsc_known_freq"

    @Test("x86-64 extrapolates only with the tsc clock source and an invariant counter")
    func x86NeedsAnInvariantCounter() {
        #expect(SystemClock.ticksDriveMonotonic(clocksource: "tsc", cpuFlags: Self.invariantFlags, architecture: .x86_64))
        #expect(!SystemClock.ticksDriveMonotonic(
            clocksource: "tsc", cpuFlags: "flags\t\t: fpu tsc rdtscp nonstop_tsc", architecture: .x86_64))
        #expect(!SystemClock.ticksDriveMonotonic(
            clocksource: "tsc", cpuFlags: "flags\t\t: fpu tsc rdtscp constant_tsc", architecture: .x86_64))
        #expect(!SystemClock.ticksDriveMonotonic(clocksource: "tsc", cpuFlags: nil, architecture: .x86_64))
        #expect(!SystemClock.ticksDriveMonotonic(clocksource: "kvm-clock", cpuFlags: Self.invariantFlags, architecture: .x86_64))
        #expect(!SystemClock.ticksDriveMonotonic(clocksource: nil, cpuFlags: Self.invariantFlags, architecture: .x86_64))
    }

    @Test("arm64 extrapolates with the architectural counter's clock source; other CPUs never")
    func otherArchitectures() {
        #expect(SystemClock.ticksDriveMonotonic(clocksource: "arch_sys_counter", cpuFlags: nil, architecture: .arm64))
        #expect(!SystemClock.ticksDriveMonotonic(clocksource: "jiffies", cpuFlags: nil, architecture: .arm64))
        #expect(!SystemClock.ticksDriveMonotonic(clocksource: "tsc", cpuFlags: Self.invariantFlags, architecture: .other))
    }

    @Test("this machine's answer follows its kernel files")
    func thisMachine() {
        let source = SystemClock.firstLine(of: "/sys/devices/system/clocksource/clocksource0/current_clocksource")
        let flags = SystemClock.firstLine(of: "/proc/cpuinfo", startingWith: "flags")
        #expect(SystemClock.ticksDriveMonotonic()
            == SystemClock.ticksDriveMonotonic(clocksource: source, cpuFlags: flags, architecture: .current))
        #expect(SystemClock.firstLine(of: "/nonexistent/runloopkit") == nil)
    }
}
