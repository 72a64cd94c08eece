import Foundation

/// How often the machine's CPUs left idle: the kernel's cpuidle counters
/// (`/sys/devices/system/cpu/cpu*/cpuidle/state*/usage`, entries into each idle state; every
/// entry ends with a wake). A machine-wide figure, so other programs count too: measure an
/// idle baseline next to it.
enum CPUIdle {
    /// Idle-state entries so far, summed over every CPU and state; nil where the kernel has
    /// no cpuidle driver.
    static func entries() -> Int? {
        let root = "/sys/devices/system/cpu"
        guard let cpus = try? FileManager.default.contentsOfDirectory(atPath: root) else { return nil }
        var total = 0
        var found = false
        for cpu in cpus where cpu.hasPrefix("cpu") && cpu.dropFirst(3).allSatisfy(\.isNumber) && cpu.count > 3 {
            let states = "\(root)/\(cpu)/cpuidle"
            for state in (try? FileManager.default.contentsOfDirectory(atPath: states)) ?? [] where state.hasPrefix("state") {
                guard let text = try? String(contentsOfFile: "\(states)/\(state)/usage", encoding: .utf8),
                      let usage = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
                total += usage
                found = true
            }
        }
        return found ? total : nil
    }

    /// Idle entries per second from now to monotonic instant `end` (ns); nil without cpuidle.
    static func rate(until end: Int64) -> Double? {
        let start = Clock.monotonic()
        guard let before = entries(), end > start else { return nil }
        usleep(UInt32((end - start) / 1_000))
        guard let after = entries() else { return nil }
        return Double(after - before) / (Double(Clock.monotonic() - start) / 1e9)
    }
}
