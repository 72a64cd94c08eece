import Foundation

/// Instruction counts, which the machine's load does not move: a probe (``Probe``) run under
/// `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured…*'`, its
/// count divided by the probe's operations. In a `strip --strip-debug` copy: this valgrind
/// cannot read Swift 6.3's DWARF 5, and the symbols stay.
final class Callgrind {
    private let valgrind: String
    private let directory: URL
    private let copy: String

    /// Sets up the stripped copy; nil, with the reason in `unavailable`.
    init?(unavailable: inout String) {
        guard let valgrind = Callgrind.find("valgrind") else {
            unavailable = "skipped: valgrind is not installed (make bench installs it)"
            return nil
        }
        guard let strip = Callgrind.find("strip") else {
            unavailable = "skipped: strip (binutils) is not installed"
            return nil
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("loop-bench-callgrind-\(getpid())")
        copy = directory.appendingPathComponent("loop-bench").path
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let status = try Children.execute(strip, ["--strip-debug", "-o", copy, Children.selfExecutable()]).status
            guard status == 0 else { throw CocoaError(.executableLoad) }
        } catch {
            unavailable = "skipped: strip --strip-debug of loop-bench failed (\(error))"
            return nil
        }
        self.valgrind = valgrind
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Instructions counted inside functions whose name holds `function`, per operation
    /// of probe `mode` (its `operations` figure) run on `peer` with `arguments`; the
    /// operations, and callgrind's output file.
    func count(in function: String, probe mode: String, _ arguments: [String], peer: Peer)
        -> (perOperation: Double, operations: Double, output: String) {
        let output = directory.appendingPathComponent("callgrind.out").path
        let (status, printed) = try! Children.execute(valgrind, [
            "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=*\(function)*",
            "--callgrind-out-file=\(output)", copy, "--probe", mode,
        ] + arguments + ["--peers", peer.key])
        guard status == 0, let operations = Callgrind.field("operations", in: printed), operations > 0,
              let text = try? String(contentsOfFile: output, encoding: .utf8),
              let instructions = Callgrind.totals(text)
        else {
            fatalError("loop-bench: callgrind of probe \(mode) on \(peer.rawValue) failed (status \(status)), printing \(printed.debugDescription)")
        }
        return (Double(instructions) / operations, operations, text)
    }

    /// The calls into functions whose name holds `callee` from functions whose name does
    /// not, in a callgrind output file, and the instructions inside them (inclusive).
    static func calls(into callee: String, in text: String) -> (calls: Int64, instructions: Int64) {
        var names: [String: String] = [:]
        /// `(id) name` or `(id)`: the name, remembered by its id.
        func name(_ field: Substring) -> String {
            guard field.hasPrefix("("), let close = field.firstIndex(of: ")") else { return String(field) }
            let id = String(field[...close])
            let rest = field[field.index(after: close)...].trimmingCharacters(in: .whitespaces)
            if !rest.isEmpty { names[id] = rest }
            return names[id] ?? id
        }
        var (caller, target, calls, instructions) = ("", "", Int64(0), Int64(0))
        var pending: Int64?
        for line in text.split(separator: "\n") {
            if let count = pending {
                pending = nil
                if target.contains(callee), !caller.contains(callee) {
                    calls += count
                    instructions += line.split(separator: " ").last.flatMap { Int64($0) } ?? 0
                }
            } else if line.hasPrefix("fn=") {
                caller = name(line.dropFirst(3))
            } else if line.hasPrefix("cfn=") {
                target = name(line.dropFirst(4))
            } else if line.hasPrefix("calls=") {
                pending = line.dropFirst(6).split(separator: " ").first.flatMap { Int64($0) } ?? 0
            }
        }
        return (calls, instructions)
    }

    /// The collected events of a callgrind output file: its `totals:` line (or `summary:`).
    static func totals(_ text: String) -> Int64? {
        let line = text.split(separator: "\n").first { $0.hasPrefix("totals:") || $0.hasPrefix("summary:") }
        return line?.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
    }

    /// `name=value` in a probe's line.
    static func field(_ name: String, in printed: String) -> Double? {
        printed.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix(name + "=") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    /// The first executable `name` on `PATH`.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
