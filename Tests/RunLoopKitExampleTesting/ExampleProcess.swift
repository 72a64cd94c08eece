import Foundation
import Glibc

/// Runs a built example binary, found next to the test binary, and collects its output.
///
/// The example test targets depend on their example's executable, so SwiftPM builds it into
/// the same products directory as the test binary; ``binary(named:)`` looks for it there.
///
/// It spawns with `posix_spawn` rather than `Process` so that the child starts with an
/// empty signal mask and default signal actions, as it would from a shell: the test
/// runner's threads block SIGINT, and `Process` passes that mask on, so an interrupt sent
/// to the child would stay pending forever.
///
/// ```swift
/// let result = try ExampleProcess.run(example: "stopwatch", ["--duration", "2", "--json"])
/// #expect(result.status == 0, "stderr: \(result.stderr)")
/// ```
public enum ExampleProcess {
    /// What a finished run left behind.
    public struct Result: Sendable {
        /// The exit status; nil when the child died of a signal or was killed at the time limit.
        public var status: Int32?
        /// Everything the child wrote to standard output, decoded as UTF-8.
        public var stdout: String
        /// Everything the child wrote to standard error, decoded as UTF-8.
        public var stderr: String

        public init(status: Int32?, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// An error starting the child.
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The example binary was not found in any of the places ``binary(named:)`` looks.
    public struct NotBuilt: Error, CustomStringConvertible {
        /// The executable's name.
        public var name: String
        public var description: String {
            "\(name) not found in \(ExampleProcess.productsDirectory.path); build it first"
        }
    }

    /// The directory holding the build products: the one the test binary runs from.
    public static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The URL of the example binary `name`, or nil when it was not built.
    ///
    /// Looks in ``productsDirectory`` and up to two of its parents (on Linux the tests may run
    /// from `<bin>/<Package>PackageTests.xctest`), then next to the main bundle.
    public static func binary(named name: String) -> URL? {
        let products = productsDirectory
        let candidates = [
            products.appendingPathComponent(name),
            products.deletingLastPathComponent().appendingPathComponent(name),
            products.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(name),
            Bundle.main.bundleURL.appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs the example binary `name`, found with ``binary(named:)``; see
    /// ``run(_:_:interruptAfter:timeLimit:)``.
    ///
    /// - Throws: ``NotBuilt`` when the binary is missing, ``SpawnError`` when it cannot start.
    public static func run(
        example name: String, _ arguments: [String], interruptAfter: Double? = nil, timeLimit: Double = 60
    ) throws -> Result {
        guard let binary = binary(named: name) else { throw NotBuilt(name: name) }
        return try run(binary, arguments, interruptAfter: interruptAfter, timeLimit: timeLimit)
    }

    /// ``run(example:_:interruptAfter:timeLimit:)`` on a thread of its own, suspending the
    /// caller until the child has ended: a test awaiting it holds no thread of the cooperative
    /// pool (two on a 2-core machine) for the child's whole run.
    ///
    /// - Throws: ``NotBuilt`` when the binary is missing, ``SpawnError`` when it cannot start.
    public static func runSuspending(
        example name: String, _ arguments: [String], interruptAfter: Double? = nil, timeLimit: Double = 60
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Swift.Result {
                    try run(example: name, arguments, interruptAfter: interruptAfter, timeLimit: timeLimit)
                })
            }
        }
    }

    /// Runs `binary` with `arguments` and standard input from /dev/null (so it is not on a
    /// terminal), capturing its standard output and standard error, and waits for it to end.
    ///
    /// If `interruptAfter` is given, sends the child SIGINT that many seconds after it is first
    /// seen catching SIGINT (its handler installed: it has started, however long its start
    /// took on a loaded machine); after `timeLimit` seconds it is killed with SIGKILL and the
    /// result's status is nil.
    ///
    /// - Throws: ``SpawnError`` when the child cannot start.
    public static func run(
        _ binary: URL, _ arguments: [String], interruptAfter: Double? = nil, timeLimit: Double = 60
    ) throws -> Result {
        let out = try makePipe()
        let err = try makePipe()
        defer { for fd in [out.read, err.read] { close(fd) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + environment { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary.path, &actions, &attributes, argv, environment)
        close(out.write)
        close(err.write)
        guard spawned == 0 else { throw SpawnError(description: "posix_spawn \(binary.path): \(String(cString: strerror(spawned)))") }

        let started = Date()
        var interrupted = interruptAfter == nil
        var catchingSince: Date?
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var waitStatus: Int32 = 0
        var exited = false
        while !exited {
            drain(out.read, into: &stdout)
            drain(err.read, into: &stderr)
            exited = waitpid(pid, &waitStatus, WNOHANG) == pid
            let elapsed = Date().timeIntervalSince(started)
            if !interrupted, let interruptAfter {
                if catchingSince == nil, catches(SIGINT, pid: pid) { catchingSince = Date() }
                if let catchingSince, Date().timeIntervalSince(catchingSince) >= interruptAfter {
                    kill(pid, SIGINT)
                    interrupted = true
                }
            }
            if !exited && elapsed > timeLimit {
                kill(pid, SIGKILL)
                waitpid(pid, &waitStatus, 0)
                exited = true
                waitStatus = -1
            }
            if !exited { usleep(20_000) }
        }
        drain(out.read, into: &stdout)
        drain(err.read, into: &stderr)
        let normal = waitStatus != -1 && waitStatus & 0x7f == 0
        return Result(status: normal ? (waitStatus >> 8) & 0xff : nil,
                      stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Whether process `pid` has a handler installed for `signal` (its `SigCgt` mask).
    private static func catches(_ signal: Int32, pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
              let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// A pipe whose read end does not block and is not inherited by the child.
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SpawnError(description: "pipe: \(String(cString: strerror(errno)))") }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        return (fds[0], fds[1])
    }

    /// Appends whatever `fd` holds now.
    private static func drain(_ fd: Int32, into bytes: inout [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            bytes += buffer[..<count]
        }
    }
}
