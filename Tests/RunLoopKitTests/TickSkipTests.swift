@testable import RunLoopKit
import Testing

/// How a tick sequence counts the ticks between two fires.
@Suite("Tick skip counts")
struct TickSkipTests {
    @Test("consecutive aligned fires a few nanoseconds more or less than an interval apart skip nothing")
    func jitterIsNotASkip() {
        let second: Int64 = 1_000_000_000
        #expect(EVRunLoop.ticksMissed(from: 0, to: second + 10, interval: second) == 0)
        #expect(EVRunLoop.ticksMissed(from: 0, to: second - 10, interval: second) == 0)
    }

    @Test("whole intervals between fires are counted")
    func wholeIntervals() {
        let second: Int64 = 1_000_000_000
        #expect(EVRunLoop.ticksMissed(from: 0, to: 3 * second + 7, interval: second) == 2)
        #expect(EVRunLoop.ticksMissed(from: 5, to: 5, interval: second) == 0)
    }
}
