import RunLoopKitExampleTesting
import Testing

/// Issue 26's program: an async `main` with a loop on a thread of its own, in Swift 5 language
/// mode and optimized, run as `loop-thread-probe` (an async main gives the main thread to
/// `dispatchMain()`, which Swift Testing's own entry point has already done).
@Suite("Real time: a loop on a thread of its own") struct LoopThreadTests {
    @Test func anAsyncMainUsesALoopOnAThreadOfItsOwn() throws {
        let result = try ExampleProcess.run(example: "loop-thread-probe", [], timeLimit: 60)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.status == 0, "stdout: \(result.stdout) stderr: \(result.stderr)")
        #expect(lines.filter { $0.hasPrefix("FAIL") } == [])
        #expect(lines.last == "6 passed, 0 failed")
    }

    /// Examples/loop-thread: about five ticks of a 0.2 s timer (0.05 s tolerance) in a one-second
    /// sleep on the loop's clock, counted by an actor pinned to the loop.
    @Test func theLoopThreadExampleTicksOnItsLoop() throws {
        let result = try ExampleProcess.run(example: "loop-thread", [], timeLimit: 60)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let ticks = result.stdout.split(separator: "\n").last.flatMap { Int($0.split(separator: " ").last ?? "") }
        // 5 on time; a loaded machine may stall the loop past a tick (skipped, not bunched) or
        // resume the sleeping task past the next.
        #expect(ticks.map { (3...6).contains($0) } == true, "stdout: \(result.stdout)")
    }
}
