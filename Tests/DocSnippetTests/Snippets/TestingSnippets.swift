import RunLoopKit
import Testing
import RunLoopKitTestSupport

// TestingOnVirtualTime.md, run as tests.

// snippet: testing-debouncer
final class Debouncer {
    private let loop: EVRunLoop
    private var timer: EVTimer?
    private var latest = ""
    private(set) var fired: [(value: String, at: EVRunLoop.Instant)] = []

    init(loop: EVRunLoop) { self.loop = loop }

    func input(_ value: String) {
        latest = value
        if let timer, timer.isValid { return timer.restart(after: .milliseconds(300)) }
        let timer = EVTimer(interval: .milliseconds(300), repeats: false, block: EVRunLoop.isolated { [unowned self] _ in
            fired.append((latest, loop.now))
        })
        self.timer = timer
        loop.add(timer, forMode: .default)
    }
}
// end

@Suite struct TestingSnippets {
    @Test func debouncerOnALoop() {
        // snippet: testing-debouncer-test
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let start = clock.now
        let debouncer = Debouncer(loop: loop)

        debouncer.input("a")
        loop.advance(by: .milliseconds(100))
        debouncer.input("ab")
        loop.advance(by: .seconds(1))          // fires at 400 ms; the mode is empty from then on
        debouncer.input("abc")
        loop.advance(by: .milliseconds(300))   // fires at 1,400 ms
        #expect(debouncer.fired.map { $0.at - start } == [.milliseconds(400), .milliseconds(1_400)])
        // end
        #expect(debouncer.fired.map(\.value) == ["ab", "abc"])
    }

    @Test func debouncerOnAnyClock() async {
        let (outputs, continuation) = AsyncStream<(String, Duration)>.makeStream()
        // snippet: testing-clock-debouncer
        let clock = EVVirtualClock()
        let start = clock.now
        let debouncer = ClockDebouncer(clock: clock, delay: .milliseconds(300)) { value in
            continuation.yield((value, clock.now - start))
        }
        debouncer.input("a")
        await clock.waitForSleepers()          // the debouncer's task is asleep
        clock.advance(by: .milliseconds(200))
        debouncer.input("ab")                  // cancels the sleep for "a"
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(300))  // "ab", at exactly 500 ms
        // end
        var received = outputs.makeAsyncIterator()
        let output = await received.next()
        #expect(output?.0 == "ab")
        #expect(output?.1 == .milliseconds(500))
    }
}
