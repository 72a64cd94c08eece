import RunLoopKitExampleTesting
import Testing

/// Issue 26's program: an async `main` with a loop on a thread of its own, in Swift 5 language
/// mode and optimized, run as `loop-thread-probe` (an async main gives the main thread to
/// `dispatchMain()`, which Swift Testing's own entry point has already done).
@Suite("Real time: a loop on a thread of its own") struct LoopThreadTests {
    @Test func anAsyncMainUsesALoopOnAThreadOfItsOwn() async throws {
        let result = try await ExampleProcess.runSuspending(example: "loop-thread-probe", [], timeLimit: 60)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.status == 0, "stdout: \(result.stdout) stderr: \(result.stderr)")
        #expect(lines.filter { $0.hasPrefix("FAIL") } == [])
        #expect(lines.last == "6 passed, 0 failed")
    }
}
