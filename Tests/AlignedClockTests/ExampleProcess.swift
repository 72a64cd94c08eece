import Foundation

/// Runs a built example binary, found next to the test bundle, and collects its output.
struct ExampleProcess {
    /// What a finished run left behind.
    struct Result {
        /// The exit status (or the signal number, for `.uncaughtSignal`).
        var status: Int32
        var reason: Process.TerminationReason
        var stdout: String
        var stderr: String
    }

    /// The directory holding the build products: the one the test binary runs from.
    static var productsDirectory: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }

    /// The URL of the example binary `name`, or nil when it was not built.
    static func binary(named name: String) -> URL? {
        let candidates = [
            productsDirectory.appendingPathComponent(name),
            Bundle.main.bundleURL.appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `binary` with `arguments`; after `interruptAfter` seconds, if given, sends it SIGINT.
    static func run(_ binary: URL, _ arguments: [String], interruptAfter: Double? = nil) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        if let interruptAfter {
            Thread.sleep(forTimeInterval: interruptAfter)
            process.interrupt()
        }
        // Read before waiting, so that a full pipe cannot stall the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, reason: process.terminationReason,
                      stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}
