import Foundation
import RunLoopKit
import Subprocess
import Testing

// ChildProcesses.md's swift-subprocess recipe: compiled and run.

// snippet: subprocess-timeout
/// Runs `command` with swift-subprocess and cancels it if it is still running after
/// `timeout` on `loop`'s clock (cancelling the run kills the child, and swift-subprocess
/// reaps it). Returns how the command ended, or nil when the timeout ended it.
func runSubprocess(_ command: String, _ arguments: [String], timeout: Duration,
                   on loop: EVRunLoop) async throws -> TerminationStatus? {
    try await withThrowingTaskGroup(of: TerminationStatus?.self) { group in
        group.addTask {
            try await Subprocess.run(.name(command), arguments: Arguments(arguments), output: .discarded)
                .terminationStatus
        }
        group.addTask {
            try await loop.clock.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }  // the loser: the sleep's timer, or the child
        return try await group.next() ?? nil
    }
}
// end

@Suite("Real time: swift-subprocess with a loop's clock for timeout")
struct SubprocessSnippetTests {
    @Test("a command that ends in time reports its status; one that does not is cancelled at the timeout")
    func timeout() async throws {
        let loop = EVRunLoop.startThread(name: "subprocess")
        let done = try await runSubprocess("sh", ["-c", "exit 3"], timeout: .seconds(60), on: loop)
        #expect(done == .exited(3))

        let started = ContinuousClock.now
        let cut = try await runSubprocess("sleep", ["60"], timeout: .milliseconds(200), on: loop)
        #expect(cut == nil)
        #expect(ContinuousClock.now - started < .seconds(30), "the timeout, not the command's 60 s, ended the run")
        await loop.shutdown()
    }
}
