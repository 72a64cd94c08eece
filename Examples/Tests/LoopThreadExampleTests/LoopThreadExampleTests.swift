import ExampleTesting
import Testing

@Suite("Real time: the loop-thread example") struct LoopThreadExampleTests {
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
