import Foundation

/// Child processes of this very binary: a workload that must measure in a process of its
/// own (memory), or in several at once (a multi-process workload), starts them here.
///
/// A child runs as `loop-bench --child <workload> --child-argument <a> --child-argument <b>…`;
/// `LoopBench` hands it to the workload's `child` entry point, which prints its result on
/// standard output for the parent to read.
enum Children {
    /// Starts `count` children of `workload` at once, each with `arguments(index)`, waits for
    /// all of them, and returns what each printed (in index order). Stops the benchmark
    /// with the child's output if one fails.
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

    /// Runs one child of `workload` with `arguments` and returns the numbers it printed on
    /// one line (``Pairs/report(_:)``); stops the benchmark if it printed anything else.
    static func figures(_ workload: String, _ arguments: [String]) -> [Double] {
        let output = run(workload) { _ in arguments }[0]
        let figures = output.split(whereSeparator: \.isWhitespace).map { Double($0) }
        guard !figures.isEmpty, !figures.contains(nil) else {
            fatalError("loop-bench: a \(workload) child with \(arguments) printed \(output.debugDescription)")
        }
        return figures.map { $0! }
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
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length <= 0 { fatalError("loop-bench: readlink(/proc/self/exe) failed") }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
