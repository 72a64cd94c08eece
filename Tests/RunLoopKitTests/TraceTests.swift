import RunLoopKit
import Testing

@Suite("Trace")
struct TraceTests {
    @Test("records every notification point and callout of a run, in order")
    func wholeRun() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVObserver(activities: [.entry, .exit], label: "o") { _, _ in }, forMode: .default)
        loop.add(EVTimer(interval: 1, repeats: false, label: "t") { _ in }, forMode: .default)
        loop.perform(label: "b") {}
        let result = loop.run(mode: .default, for: .seconds(10))

        #expect(result == .finished)
        #expect(trace.lines == [
            "entry", "o@entry", "beforeTimers", "beforeSources", "block(b)", "beforeWaiting",
            "afterWaiting", "timer(t)", "exit", "o@exit", "return(finished)",
        ])
        trace.removeAll()
        #expect(trace.events.isEmpty)
    }
}
