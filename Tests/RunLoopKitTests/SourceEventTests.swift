import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// Async sequences of source events (issue 27): a descriptor's readiness, a signal's
/// arrivals, a file's changes, each on a loop running on a thread of its own.
@Suite("Real time: source event sequences", .timeLimit(.minutes(10)))
struct SourceEventTests {
    @Test("a pipe's readiness: one element per byte read, and no callouts while the consumer is busy")
    func descriptorReadiness() async throws {
        let thread = LoopThread()
        defer { thread.stop() }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = write(writeEnd, "abc", 3)
        var bytes: [UInt8] = []
        var passesWhileBusy = 0
        for try await event in thread.loop.readiness(of: readEnd, inMode: .default) {
            #expect(event.count == 1)
            // Busy for 100 ms with a byte unread: the loop must not spin on the ready pipe.
            let before = thread.onLoop { thread.loop.statistics.passes }
            try await Task.sleep(for: .milliseconds(100))
            passesWhileBusy = max(passesWhileBusy, thread.onLoop { thread.loop.statistics.passes } - before)
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            bytes.append(byte)
            if bytes.count == 3 { break }
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "abc")
        // The onLoop blocks' own passes and the test loop's run cycles, a few dozen at most on
        // a loaded machine, not one per readiness (without the pause: about 18,000).
        #expect(passesWhileBusy <= 50)
    }

    @Test("a signal's arrivals: a burst folds into elements whose counts add up")
    func signalArrivals() async throws {
        await #expect(processExitsWith: .success) {
            signal(SIGUSR1, SIG_IGN)  // until the sequence's source catches it
            let thread = LoopThread()
            let arrived = Mutex(0)
            let done = DispatchSemaphore(value: 0)
            let consumer = Task {
                for try await event in thread.loop.signals(SIGUSR1, inMode: .default) {
                    arrived.withLock { $0 += event.count }
                    done.signal()
                }
            }
            // The source is added when iteration starts: keep signalling until it is caught.
            // Awaited, not waited for: a blocking wait would hold a thread of the pool the
            // consumer task needs to run at all.
            var received = false
            for _ in 0..<200 where !received {
                kill(getpid(), SIGUSR1)
                received = await signalled(done, within: .milliseconds(50))
            }
            consumer.cancel()
            _ = await consumer.result
            thread.stop()
            exit(received && arrived.withLock({ $0 }) >= 1 ? 0 : 1)
        }
    }

    @Test("a directory's changes, until it is removed: then the sequence ends")
    func fileChangesEnd() async throws {
        let thread = LoopThread()
        defer { thread.stop() }
        let directory = FileManager.default.temporaryDirectory.path + "/runloopkit-events-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var seen: EVSource.FileChanges = []
        var names: [String] = []
        var elements = 0
        let events = thread.loop.fileChanges(at: directory, inMode: .default)
        var iterator = events.makeAsyncIterator()  // the watch starts here
        close(open(directory + "/a", O_CREAT | O_WRONLY, 0o644))
        while let event = try await iterator.next() {
            elements += 1
            seen.formUnion(event.fileChanges)
            names += event.changedNames.filter { !names.contains($0) }
            if elements == 1 {
                close(open(directory + "/b", O_CREAT | O_WRONLY, 0o644))
                try FileManager.default.removeItem(atPath: directory)
            }
        }
        #expect(seen.isSuperset(of: [.created, .deleted]))
        #expect(names == ["a", "b"])
    }

    @Test("a path that cannot be watched throws at the first element")
    func missingPathThrows() async {
        let thread = LoopThread()
        defer { thread.stop() }
        await #expect(throws: EVRunLoop.Error.self) {
            for try await _ in thread.loop.fileChanges(at: "/nonexistent/runloopkit-events") {}
        }
    }

    @Test("cancelling the consuming task ends the sequence and lets its source go")
    func cancellation() async throws {
        let thread = LoopThread()
        defer { thread.stop() }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let readEnd = fds[0]
        let consumer = Task {
            var count = 0
            for try await _ in thread.loop.readiness(of: readEnd, inMode: "events") { count += 1 }
            return count
        }
        // Its source in a private mode: the mode is not empty while the iteration lasts.
        var started = false
        for _ in 0..<500 where !started {
            started = thread.onLoop { thread.loop.run(mode: "events", for: .zero) != .finished }
            if !started { try await Task.sleep(for: .milliseconds(10)) }
        }
        consumer.cancel()
        #expect(try await consumer.value == 0)
        var empty = false
        for _ in 0..<500 where !empty {
            empty = thread.onLoop { thread.loop.run(mode: "events", for: .zero) == .finished }
            if !empty { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(started)
        #expect(empty)
    }
}
