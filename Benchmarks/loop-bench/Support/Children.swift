import CLibevBench
import Foundation

/// Child processes of this binary, one or several at once: `loop-bench --child <workload>
/// --child-argument <a> …` runs the workload's `child` entry point, which prints its result.
enum Children {
    /// Starts `count` children of `workload` at once, each with `arguments(index)`, and returns
    /// what each printed, in order; a failed child stops the benchmark with its output.
    static func run(_ workload: String, count: Int = 1, arguments: (Int) -> [String]) -> [String] {
        let executable = URL(fileURLWithPath: selfExecutable())
        let children = (0..<count).map { index -> (Process, Pipe) in
            let process = Process()
            process.executableURL = executable
            process.arguments = ["--child", workload] + arguments(index).flatMap { ["--child-argument", $0] }
            let pipe = Pipe()
            process.standardOutput = pipe
            do {
                try process.run()
            } catch {
                fatalError("loop-bench: cannot start a \(workload) child: \(error)")
            }
            return (process, pipe)
        }
        return children.map { process, pipe in
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            if process.terminationStatus != 0 {
                fatalError("loop-bench: a \(workload) child exited with \(process.terminationStatus), printing \(output.debugDescription)")
            }
            return output
        }
    }

    /// Runs one child of `workload` with `arguments` and returns the numbers it printed
    /// (``Pairs/report(_:)``); stops the benchmark on anything else, or not `expected` of them.
    static func figures(_ workload: String, _ arguments: [String], expected: Int? = nil) -> [Double] {
        let output = run(workload) { _ in arguments }[0]
        let figures = output.split(whereSeparator: \.isWhitespace).map { Double($0) }
        guard !figures.isEmpty, !figures.contains(nil), expected.map({ $0 == figures.count }) ?? true else {
            fatalError("loop-bench: a \(workload) child with \(arguments) printed \(output.debugDescription)")
        }
        return figures.map { $0! }
    }

    /// One child per key with `arguments(key)`, the keys interleaved, `repetitions` times:
    /// each key's figures, one list per repetition. `pinned`: repetition i's children are
    /// bound to the i-th CPU (children inherit the CPUs of the thread that starts them).
    static func interleaved<Key: Hashable>(_ workload: String, repetitions: Int, pinned: Bool = false, _ keys: [Key],
                                           _ arguments: (Key) -> [String]) -> [Key: [[Double]]] {
        var figures: [Key: [[Double]]] = [:]
        for repetition in 0..<repetitions {
            if pinned { _ = lb_pin_to_cpu(Int32(repetition)) }
            defer { if pinned { lb_unpin() } }
            for key in keys { figures[key, default: []].append(self.figures(workload, arguments(key))) }
        }
        return figures
    }

    /// In a child: runs `measure(20)` untimed (it warms the process), then prints the median
    /// and p99 (µs) of the latencies (ns) of `measure(count)`.
    static func reportLatencies(count: Int, _ measure: (Int) -> [Double]) {
        _ = measure(20)
        Pairs.report(Summary(measure(count)).microseconds)
    }

    /// Runs another program, `executable` with `arguments`; returns its status and standard
    /// output (its standard error is dropped: valgrind's own report, git's complaints).
    static func execute(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// The path of this binary (`/proc/self/exe`).
    static func selfExecutable() -> String {
        try! FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }
}
