import Foundation
import RunLoopKit
import Synchronization
import Testing

/// A value touched only on the loop's thread, handed to `@Sendable` callouts.
final class LoopBox<Value>: @unchecked Sendable {
    // Safe: tests read and write it only on the loop's thread (or after the run).
    var value: Value
    init(_ value: Value) { self.value = value }
}

@Suite("wakeDate", .timeLimit(.minutes(1)))
struct WakeDateTests {
    @Test("every callout of one pass reads the same wakeDate, set before the first entry observer")
    func onePassOneDate() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let seen = LoopBox<[(String, Date?)]>([])
        #expect(loop.wakeDate == nil)

        // The earliest possible observer still sees the date of this pass, never nil or stale.
        let first = EVObserver(activities: [.entry, .afterWaiting], order: .min) { _, activity in
            seen.value.append(("\(activity)", loop.wakeDate))
        }
        loop.add(first, forMode: .default)
        for name in ["t1", "t2", "t3"] {
            loop.add(EVTimer(interval: 1, repeats: false) { _ in
                seen.value.append((name, loop.wakeDate))
                clock.advance(by: .milliseconds(7))  // slow work: the clock moves, wakeDate must not
            }, forMode: .default)
        }
        let start = clock.wallNow
        loop.run(mode: .default, for: .seconds(5))

        let dates = seen.value.map(\.1)
        #expect(seen.value.map(\.0) == ["entry", "afterWaiting", "t1", "t2", "t3"])
        #expect(dates[0] == start)
        #expect(dates[1] == start.addingTimeInterval(1))
        #expect(dates[2...].allSatisfy { $0 == dates[1] })
        #expect(abs(clock.wallNow.timeIntervalSince(start) - 1.021) < 1e-6)
        #expect(loop.wakeInstant != nil)
    }

    @Test("a nested run sets its own wakeDate, which the outer pass then reads")
    func nested() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let dates = LoopBox<[Date?]>([])
        loop.add(EVTimer(interval: 1, repeats: true) { _ in }, forMode: "inner")
        loop.add(EVTimer(interval: 2, repeats: false) { _ in
            dates.value.append(loop.wakeDate)
            loop.run(mode: "inner", for: .seconds(3))
            dates.value.append(loop.wakeDate)
        }, forMode: .default)
        let start = clock.wallNow
        loop.run(mode: .default, for: .seconds(10))
        #expect(dates.value == [start.addingTimeInterval(2), start.addingTimeInterval(5)])
    }
}
