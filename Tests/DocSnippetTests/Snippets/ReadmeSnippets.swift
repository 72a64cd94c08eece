import RunLoopKit
import Testing

// README.md's blocks that are not the first example (that one is Examples/first-steps).
@Suite struct ReadmeSnippets {
    @Test func testingOnAVirtualClock() {
        // snippet: readme-virtual-clock
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVTimer(interval: 60, repeats: false, label: "t") { _ in }, forMode: .default)
        loop.run(mode: .default, for: .seconds(3600))
        #expect(trace.lines.contains("timer(t)"))
        // end
    }
}
