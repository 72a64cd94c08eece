import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// File sources (issue 27): inotify through the file's directory, atomic saves, deletion,
/// directories, and a tolerance that makes a burst one callout.
@Suite("Real time: file sources", .timeLimit(.minutes(10)))
struct FileSourceTests {
    /// A fresh directory under the temporary one, removed by `body`'s caller.
    static func withDirectory<T>(_ body: (String) throws -> T) rethrows -> T {
        let path = FileManager.default.temporaryDirectory.path + "/runloopkit-files-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try body(path)
    }

    /// ``withDirectory(_:)`` for a body that suspends.
    static func withDirectory<T>(_ body: (String) async throws -> T) async rethrows -> T {
        let path = FileManager.default.temporaryDirectory.path + "/runloopkit-files-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    /// Writes `text` to `path` in place (no rename).
    static func write(_ text: String, to path: String, appending: Bool = false) {
        let fd = open(path, O_WRONLY | O_CREAT | (appending ? O_APPEND : O_TRUNC), 0o644)
        precondition(fd >= 0, "open \(path)")
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// Runs `loop` in its default mode until `done` holds, for at most 10 s.
    static func run(_ loop: EVRunLoop, until done: () -> Bool) {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline { loop.run(mode: .default, for: .milliseconds(20)) }
    }

    /// What a file source's callouts reported, in order.
    final class Log: Sendable {
        let entries = Mutex<[(EVSource.FileChanges, [String])]>([])
        func record(_ source: EVSource) { entries.withLock { $0.append((source.fileChanges, source.changedNames)) } }
        var changes: [EVSource.FileChanges] { entries.withLock { $0.map(\.0) } }
        var names: [[String]] { entries.withLock { $0.map(\.1) } }
        var count: Int { entries.withLock { $0.count } }
    }

    @Test("a write in place, an atomic save, then a write to the new file: each reported as modified")
    func atomicSave() {
        Self.withDirectory { directory in
            let file = directory + "/app.conf"
            Self.write("a = 1\n", to: file)
            let changes = onFreshThread { () -> [EVSource.FileChanges] in
                let loop = EVRunLoop.current
                let log = Log()
                let source = try! EVSource(watching: file, for: [.modified, .created, .deleted]) { log.record($0) }
                loop.add(source, forMode: .default)
                Self.write("a = 2\n", to: file)
                Self.run(loop) { log.count >= 1 }
                // The editor's save: a temporary file renamed over the original.
                Self.write("a = 3\n", to: directory + "/.app.conf.swp")
                rename(directory + "/.app.conf.swp", file)
                Self.run(loop) { log.count >= 2 }
                Self.write("a = 4\n", to: file, appending: true)  // the new file is the watched one
                Self.run(loop) { log.count >= 3 }
                source.invalidate()
                return log.changes
            }
            #expect(changes == [.modified, .modified, .modified])
        }
    }

    @Test("deleting the file reports it; creating it again reports that")
    func deletedThenCreated() {
        Self.withDirectory { directory in
            let file = directory + "/data"
            Self.write("x", to: file)
            let changes = onFreshThread { () -> [EVSource.FileChanges] in
                let loop = EVRunLoop.current
                let log = Log()
                let source = try! EVSource(watching: file) { log.record($0) }
                loop.add(source, forMode: .default)
                unlink(file)
                Self.run(loop) { log.count >= 1 }
                Self.write("y", to: file)
                Self.run(loop) { log.changes.last?.contains(.modified) == true }
                source.invalidate()
                return log.changes
            }
            #expect(changes.first == .deleted)
            #expect(changes.dropFirst().reduce(EVSource.FileChanges(), { $0.union($1) }) == [.created, .modified])
        }
    }

    @Test("a burst of 1,000 writes within a 50 ms tolerance is one to three callouts")
    func burstWithTolerance() async {
        await Self.withDirectory { directory in
            let file = directory + "/log"
            Self.write("", to: file)
            let (callouts, changes) = await onFreshThreadAwaiting { () -> (Int, EVSource.FileChanges) in
                let loop = EVRunLoop.current
                let log = Log()
                let source = try! EVSource(watching: file, for: .modified, tolerance: .milliseconds(50)) { log.record($0) }
                loop.add(source, forMode: .default)
                let fd = open(file, O_WRONLY | O_APPEND)
                let writer = EVTimer(interval: .milliseconds(1), repeats: false) { _ in
                    for _ in 0..<1_000 { _ = Glibc.write(fd, "x", 1) }
                }
                loop.add(writer, forMode: .default)
                loop.run(mode: .default, for: .milliseconds(400))
                close(fd)
                source.invalidate()
                return (log.count, log.changes.reduce(EVSource.FileChanges(), { $0.union($1) }))
            }
            #expect((1...3).contains(callouts))
            #expect(changes == .modified)
        }
    }

    @Test("a directory reports its entries' changes by name; its removal ends the source")
    func directoryEntries() {
        Self.withDirectory { parent in
            let directory = parent + "/watched"
            mkdir(directory, 0o755)
            let (changes, names, valid) = onFreshThread { () -> ([EVSource.FileChanges], [[String]], Bool) in
                let loop = EVRunLoop.current
                let log = Log()
                let source = try! EVSource(watching: directory, for: [.created, .deleted]) { log.record($0) }
                loop.add(source, forMode: .default)
                Self.write("1", to: directory + "/a")
                Self.run(loop) { log.count >= 1 }
                unlink(directory + "/a")
                rmdir(directory)
                Self.run(loop) { !source.isValid }
                return (log.changes, log.names, source.isValid)
            }
            #expect(changes.first == .created)
            #expect(names.first == ["a"])
            #expect(changes.dropFirst().reduce(EVSource.FileChanges(), { $0.union($1) }) == .deleted)
            #expect(names.dropFirst().flatMap { $0 } == ["a"])
            #expect(!valid)
        }
    }

    @Test("a change fires the source only while a mode holding it runs, in the sources phase")
    func modes() throws {
        try Self.withDirectory { directory in
            let file = directory + "/data"
            Self.write("x", to: file)
            let (whileDefault, lines) = onFreshThread { () -> (Int, [String]) in
                let loop = EVRunLoop.current
                let log = Log()
                let source = try! EVSource(watching: file, label: "file") { log.record($0) }
                loop.add(source, forMode: "other")
                loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
                loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: "other")
                Self.write("y", to: file)
                loop.run(mode: .default, for: .milliseconds(50))
                let whileDefault = log.count
                let trace = EVRunLoop.Trace()
                loop.trace = trace
                loop.run(mode: "other", for: .seconds(5), returnAfterSourceHandled: true)
                loop.trace = nil
                source.invalidate()
                return (whileDefault, trace.lines)
            }
            #expect(whileDefault == 0)
            // The pass that woke for it: the callout comes after the wait, as a source's does.
            let sourceLine = try #require(lines.firstIndex(of: "source(file)"))
            #expect(lines[..<sourceLine].suffix(2) == ["beforeWaiting", "afterWaiting"])
        }
    }

    @Test("sources sharing a file and its directory each get every change; one invalidated, the others go on")
    func sharedWatch() {
        Self.withDirectory { directory in
            let file = directory + "/shared"
            Self.write("", to: file)
            let (firstRound, secondRound) = onFreshThread { () -> ([Int], [Int]) in
                let loop = EVRunLoop.current
                let logs = [Log(), Log(), Log()]
                let sources = [
                    try! EVSource(watching: file, for: .modified) { logs[0].record($0) },
                    try! EVSource(watching: file, for: .modified) { logs[1].record($0) },
                    try! EVSource(watching: directory, for: .modified) { logs[2].record($0) },
                ]
                for source in sources { loop.add(source, forMode: .default) }
                Self.write("1", to: file, appending: true)
                Self.run(loop) { logs.allSatisfy { $0.count >= 1 } }
                let firstRound = logs.map(\.count)
                sources[0].invalidate()  // the directory's watch stays for the other two
                Self.write("2", to: file, appending: true)
                Self.run(loop) { logs[1].count > firstRound[1] && logs[2].count > firstRound[2] }
                let secondRound = zip(logs, firstRound).map { $0.count - $1 }
                for source in sources { source.invalidate() }
                return (firstRound, secondRound)
            }
            #expect(firstRound.allSatisfy { $0 >= 1 })
            #expect(secondRound[0] == 0 && secondRound[1] >= 1 && secondRound[2] >= 1)
        }
    }

    @Test("an overflowed inotify queue is reported as overflow to every file source of the loop, then watching goes on")
    func overflow() async throws {
        let limit = try #require(Int(String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        await Self.withDirectory { parent in
            let (directory, other) = (parent + "/busy", parent + "/quiet")
            mkdir(directory, 0o755)
            mkdir(other, 0o755)
            Self.write("", to: other + "/file")
            let (busy, quiet, after) = await onFreshThreadAwaiting { () -> ([EVSource.FileChanges], [EVSource.FileChanges], [[String]]) in
                let loop = EVRunLoop.current
                let (busy, quiet) = (Log(), Log())
                let watching = try! EVSource(watching: directory, for: .created) { busy.record($0) }
                let file = try! EVSource(watching: other + "/file", for: .modified) { quiet.record($0) }
                loop.add(watching, forMode: .default)
                loop.add(file, forMode: .default)
                loop.run(mode: .default, for: .zero)
                // Each file is IN_CREATE and IN_CLOSE_WRITE: more events than the queue holds.
                for index in 0..<(limit / 2 + 100) { close(open(directory + "/f\(index)", O_WRONLY | O_CREAT, 0o644)) }
                Self.run(loop) { busy.count >= 1 && quiet.count >= 1 }
                let overflowed = (busy.changes, quiet.changes)
                Self.write("", to: directory + "/after")
                Self.run(loop) { busy.count >= overflowed.0.count + 1 }
                let after = Array(busy.names.dropFirst(overflowed.0.count))
                watching.invalidate()
                file.invalidate()
                return (overflowed.0, overflowed.1, after)
            }
            #expect(busy.map { $0.contains(.overflow) } == [true])
            #expect(quiet == [.overflow])
            #expect(after == [["after"]])
        }
    }

    @Test("a path that does not exist is thrown, naming stat")
    func missingPath() {
        #expect(throws: EVRunLoop.Error(call: "EVSource(watching: \"/nonexistent/runloopkit\"): stat", errno: ENOENT)) {
            _ = try EVSource(watching: "/nonexistent/runloopkit") { _ in }
        }
    }

    @Test("a relative or empty path stops with a message naming the call and the path")
    func relativePath() async {
        let relative = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try? EVSource(watching: "config/app.conf") { _ in }
        }
        #expect(standardError(relative).contains("EVSource(watching: \"config/app.conf\"): the path is not absolute"))
        let empty = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try? EVSource(watching: "") { _ in }
        }
        #expect(standardError(empty).contains("EVSource(watching: \"\"): the path is not absolute"))
    }
}
