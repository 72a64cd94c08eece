import Glibc
@testable import RunLoopKit
import Testing

/// `try await loop.waitForExit(ofChild:)`, on a loop running on a thread of its own.
@Suite("Real time: awaiting a child's exit", .timeLimit(.minutes(10)))
struct ChildExitAsyncTests {
    @Test("awaiting a child's exit returns its status", arguments: ChildWatch.allCases)
    func awaitsExit(watch: ChildWatch) async throws {
        let thread = LoopThread()
        defer { thread.stop() }
        let pid = spawnChild(["/bin/sh", "-c", "sleep 0.05; exit 3"])
        let exit = try await thread.loop.waitForExit(ofChild: pid, usingPidfd: watch.usingPidfd)
        #expect(exit == .exited(3))
        #expect(!isUnreapedChild(pid))
    }

    @Test("cancelling the wait throws at once and leaves the child unreaped")
    func cancellation() async throws {
        let thread = LoopThread()
        defer { thread.stop() }
        // Long enough to outlast any stall of a loaded machine before the cancel (killed below).
        let pid = spawnChild(["/bin/sleep", "3600"])
        let task = Task { try await thread.loop.waitForExit(ofChild: pid) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let start = ContinuousClock.now
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        // "At once" against the child's hour: the bound tells a cancelled wait from one that
        // waited for the exit, with room for a loaded machine whose task threads stall.
        #expect(ContinuousClock.now - start < .seconds(60))
        kill(pid, SIGKILL)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid, "the cancelled wait's source did not reap the child")
        #expect(status & 0x7f == SIGKILL)
    }

    @Test("awaiting a pid that is not a child throws the error naming it")
    func notAChild() async {
        let thread = LoopThread()
        defer { thread.stop() }
        await #expect(throws: EVRunLoop.Error.self) { _ = try await thread.loop.waitForExit(ofChild: 1) }
    }
}
