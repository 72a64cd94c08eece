import RunLoopKit
import Testing

// The examples in the doc comments of Sources/RunLoopKit/Public.
@Suite struct SymbolDocSnippets {
    /// Compiled, not run: they use the thread's real loop.
    static func realLoopExamples() {
        do {
            // snippet: evrunloop-doc
            let loop = EVRunLoop.current
            let tick = EVTimer(interval: 1, repeats: true) { _ in print("tick") }
            loop.add(tick, forMode: .default)
            loop.run(mode: .default, for: .seconds(3))
            // end
        }
        do {
            // snippet: evtimer-doc
            let timer = EVTimer(interval: 1, repeats: true, tolerance: 0.1) { _ in print("refresh") }
            EVRunLoop.current.add(timer, forMode: .common)
            // end
        }
        do {
            // snippet: evtimer-aligned-duration-doc
            let clock = EVTimer(alignedTo: .seconds(1), tolerance: .milliseconds(5)) { _ in print("tick") }
            EVRunLoop.current.add(clock, forMode: .common)
            // end
        }
        do {
            // snippet: evobserver-doc
            let observer = EVObserver(activities: [.entry, .afterWaiting]) { _, activity in
                print("woke:", activity)
            }
            EVRunLoop.current.add(observer, forMode: .default)
            // end
        }
        do {
            // snippet: evframetimer-doc
            let link = EVFrameTimer(framesPerSecond: 60) { link in
                print("draw the frame shown at", link.targetTimestamp)
            }
            EVRunLoop.current.add(link, forMode: .common)
            // end
        }
    }

    @Test func virtualClockDoc() {
        // snippet: evvirtualclock-doc
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.add(EVTimer(interval: .seconds(5), repeats: false) { _ in }, forMode: .default)
        loop.run(mode: .default, for: .seconds(60))   // returns at once; clock.now advanced
        // end
        #expect(clock.now == EVRunLoop.Instant(nanoseconds: 1_005_000_000_000))  // the default start + 5 s
    }

    @Test func traceDoc() {
        // snippet: trace-doc
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVTimer(interval: 0.5, repeats: false, label: "tick") { _ in }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        #expect(trace.lines == ["entry", "beforeTimers", "beforeSources", "beforeWaiting",
                                "afterWaiting", "timer(tick)", "exit", "return(finished)"])
        // end
    }
}
