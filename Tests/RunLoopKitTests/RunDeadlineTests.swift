import Foundation
import RunLoopKit
import Testing

/// Run deadlines: a deadline at or before now is exactly one polling pass, and later
/// deadlines reach the monotonic clock without losing precision.
@Suite("Run deadlines", .timeLimit(.minutes(10)))
struct RunDeadlineTests {
    @Test("run(mode:until: Date()) is always exactly one polling pass on the real loop")
    func dateNowPolls() {
        let waits = onFreshThread { () -> Int in
            let loop = EVRunLoop.current
            let waiting = LoopBox(0)
            loop.add(EVObserver(activities: .beforeWaiting) { _, _ in waiting.value += 1 }, forMode: .default)
            loop.add(EVTimer(interval: 100, repeats: false) { _ in }, forMode: .default)
            for _ in 0..<5_000 { loop.run(mode: .default, until: Date()) }
            return waiting.value
        }
        #expect(waits == 0)
    }

    @Test("a deadline equal to the loop's wall clock as a Date polls once, whatever the rounding")
    func deadlineAtWallNowPolls() {
        var waitingRuns = 0
        for step in 0..<2_000 {
            // `Date()`-like values at many sub-microsecond phases.
            let now = Date(timeIntervalSinceReferenceDate: 815_000_000 + Double(step) * 0.000_123_457)
            let loop = EVRunLoop(clock: EVVirtualClock(wallStart: now))
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            loop.add(EVTimer(interval: 100, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, until: now)
            if trace.lines.contains("beforeWaiting") { waitingRuns += 1 }
        }
        #expect(waitingRuns == 0)
    }

    @Test("a Date deadline reaches the loop's clock to the nanosecond")
    func exactDateDeadline() {
        // Near 2001 (Foundation's reference date) a Date holds sub-nanosecond precision.
        let clock = EVVirtualClock(wallStart: Date(timeIntervalSinceReferenceDate: 0))
        let loop = EVRunLoop(clock: clock)
        loop.add(EVTimer(interval: 100, repeats: false) { _ in }, forMode: .default)
        let start = clock.now
        let result = loop.run(mode: .default, until: Date(timeIntervalSinceReferenceDate: 0.123_456_789))
        #expect(result == .timedOut)
        #expect(clock.now - start == .nanoseconds(123_456_789))
    }

    @Test("a Duration deadline of one nanosecond waits exactly that long")
    func oneNanosecond() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVTimer(interval: 100, repeats: false) { _ in }, forMode: .default)
        let start = clock.now
        loop.run(mode: .default, for: .nanoseconds(1))
        #expect(clock.now - start == .nanoseconds(1))
        #expect(trace.lines.contains("beforeWaiting"))
    }

    @Test("a deadline beyond CF's 16-year limit means no deadline")
    func beyondLimitIsForever() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.add(EVTimer(interval: .seconds(1), repeats: false) { _ in }, forMode: .default)
        let result = loop.run(mode: .default, until: .distantFuture)
        #expect(result == .finished)  // the timer fired and emptied the mode; no timeout
    }
}
