import CLibevBench
import Foundation

/// Where and when the numbers were taken.
struct Machine: Encodable {
    var cpu: String
    var cores: Int
    var kernel: String
    var libev: String
    var swift: String
    var date: String
    /// `/proc/loadavg` when the run ended: other work on the machine during the run.
    var load: String
    /// The git revision measured, when run inside the repository.
    var revision: String

    static func current(revision: String) -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let formatter = ISO8601DateFormatter()
        return Machine(
            cpu: model ?? "unknown", cores: ProcessInfo.processInfo.activeProcessorCount,
            kernel: "Linux \(kernel)",
            libev: "\(lb_libev_version_major()).\(lb_libev_version_minor())",
            swift: swiftVersion, date: formatter.string(from: Date()),
            load: (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
                .split(separator: " ").prefix(3).joined(separator: " ") ?? "unknown",
            revision: revision)
    }

    /// `git rev-parse --short HEAD`, noting uncommitted changes under `Sources/` (the
    /// library being measured); "unknown" outside a git checkout.
    static func revision() -> String {
        guard let head = git(["rev-parse", "--short", "HEAD"]), !head.isEmpty else { return "unknown" }
        let changed = git(["status", "--porcelain", "--", ":/Sources"]).map { !$0.isEmpty } ?? false
        return changed ? "\(head) with uncommitted changes in Sources/" : head
    }

    private static func git(_ arguments: [String]) -> String? {
        guard let (status, output) = try? Children.execute("/usr/bin/env", ["git"] + arguments), status == 0 else { return nil }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The compiler that built this binary, as precise as `#if compiler` can tell.
    private static var swiftVersion: String {
        #if compiler(>=6.4)
        "Swift ≥ 6.4"
        #elseif compiler(>=6.3)
        "Swift 6.3"
        #else
        "Swift < 6.3"
        #endif
    }
}
