#if SwiftSystem
import Foundation
import RunLoopKit
import RunLoopKitSystem
import SystemPackage
import Testing

/// Waits for the first element of `events`, or throws `CancellationError` after a minute.
func first(of events: EVRunLoop.SourceEvents) async throws -> EVRunLoop.SourceEvent? {
    try await withThrowingTaskGroup(of: EVRunLoop.SourceEvent?.self) { group in
        group.addTask {
            var iterator = events.makeAsyncIterator()
            return try await iterator.next()
        }
        group.addTask {
            try await Task.sleep(for: .seconds(60))
            throw CancellationError()
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}

/// The swift-system forms of descriptor sources, readiness, the poll descriptor and errors.
@Suite("Real time: swift-system forms")
struct SystemFormTests {
    @Test("a FileDescriptor source fires when its pipe becomes readable, and knows its descriptor")
    func descriptorSource() async throws {
        let loop = EVRunLoop.startThread(name: "system-forms")
        let pipe = try FileDescriptor.pipe()
        defer { try? pipe.writeEnd.close() }
        let readable = AsyncStream<Void>.makeStream()
        let source = try EVSource(fileDescriptor: pipe.readEnd, closesDescriptor: true, label: "pipe") { _ in
            readable.continuation.yield()
        }
        #expect(source.kind == .fileDescriptor(pipe.readEnd))
        #expect(source.kind == .fileDescriptor(pipe.readEnd.rawValue))
        #expect(source.kind.systemFileDescriptor == pipe.readEnd)
        loop.add(source, forMode: .common)
        _ = try pipe.writeEnd.writeAll([UInt8(ascii: "x")])
        var fired = readable.stream.makeAsyncIterator()
        #expect(await fired.next() != nil)
        source.invalidate()  // closes the read end
        await loop.shutdown()
    }

    @Test("readiness(of: FileDescriptor) yields once the descriptor is readable")
    func readinessSequence() async throws {
        let loop = EVRunLoop.startThread(name: "system-forms")
        let pipe = try FileDescriptor.pipe()
        defer {
            try? pipe.readEnd.close()
            try? pipe.writeEnd.close()
        }
        _ = try pipe.writeEnd.writeAll([UInt8(ascii: "x")])
        let event = try await first(of: loop.readiness(of: pipe.readEnd))
        #expect(event?.count == 1)
        await loop.shutdown()
    }

    @Test("fileChanges(at: FilePath) reports a write to the file")
    func fileChanges() async throws {
        let loop = EVRunLoop.startThread(name: "system-forms")
        let path = FilePath(NSTemporaryDirectory() + "runloopkit-system-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        let file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: .ownerReadWrite)
        defer {
            try? file.close()
            _ = unlink(path.string)
        }
        let events = loop.fileChanges(at: path, for: .modified)
        let written = Task {
            // The sequence's source is made by its first next(): write until it is seen.
            while !Task.isCancelled {
                _ = try? file.writeAll([UInt8(ascii: "x")])
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        let event = try await first(of: events)
        written.cancel()
        #expect(event?.fileChanges.contains(.modified) == true)
        await loop.shutdown()
    }

    @Test("the EVSource(watching: FilePath) form watches the path its string names")
    func watchingSource() throws {
        let path = FilePath(NSTemporaryDirectory())
        let source = try EVSource(watching: path, for: .created) { _ in }
        #expect(source.kind == .fileChanges(path.string))
        source.invalidate()
    }

    @Test("a libev loop's poll descriptor as a FileDescriptor")
    func pollDescriptor() async {
        let loop = EVRunLoop.startThread(name: "system-forms")
        #expect(loop.systemPollDescriptor == FileDescriptor(rawValue: loop.pollDescriptor))
        #expect(loop.systemPollDescriptor.rawValue >= 0)
        await loop.shutdown()
    }

    @Test("a source on a closed descriptor throws an error whose Errno is EBADF")
    func errnoOfAClosedDescriptor() {
        // A descriptor number no test holds: far above what the process opens.
        let closed = FileDescriptor(rawValue: 1_000_000)
        do {
            _ = try EVSource(fileDescriptor: closed) { _ in }
            Issue.record("a closed descriptor was accepted")
        } catch {
            #expect(error.systemErrno == .badFileDescriptor)
            #expect(error.errno == Errno.badFileDescriptor.rawValue)
        }
    }

    @Test("an error made from an Errno carries its number")
    func errorFromErrno() {
        let error = EVRunLoop.Error(call: "read", errno: Errno.resourceTemporarilyUnavailable)
        #expect(error.errno == EAGAIN)
        #expect(error.systemErrno == .resourceTemporarilyUnavailable)
        #expect(error == EVRunLoop.Error(call: "read", errno: EAGAIN))
    }
}
#endif
