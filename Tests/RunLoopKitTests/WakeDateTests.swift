import Foundation
import RunLoopKit
import Synchronization
import Testing

@Suite("wakeDate", .timeLimit(.minutes(10)))
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

    @Test("wakeDeadline is the deadline that ended the wait; nil at entry and when a wake-up ended it")
    func wakeDeadlineOnVirtualLoop() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let start = clock.now
        let seen = LoopBox<[EVRunLoop.Instant?]>([])
        loop.add(EVObserver(activities: [.entry, .afterWaiting]) { _, _ in seen.value.append(loop.wakeDeadline) },
                 forMode: .default)
        loop.add(EVTimer(fireAt: start + .seconds(1), tolerance: .milliseconds(500)) { _ in }, forMode: .default)
        loop.add(EVTimer(fireAt: start + .milliseconds(1_200)) { _ in }, forMode: .default)
        loop.run(mode: .default, for: .seconds(5))
        // One wake at 1.2 s serves both timers (the greedy rule), then the mode is empty.
        #expect(seen.value == [nil, start + .milliseconds(1_200)])

        // A wait that a block performed from another thread ends has no deadline of its own.
        seen.value = []
        loop.add(EVSource { _ in }, forMode: .default)  // keeps the mode alive with no timer
        let waiting = DispatchSemaphore(value: 0)
        loop.add(EVObserver(activities: .beforeWaiting) { _, _ in waiting.signal() }, forMode: .default)
        let performer = Thread {
            waiting.wait()  // the loop is about to wait: the block must end that wait
            loop.perform(inModes: [.default]) { seen.value.append(loop.wakeDeadline); EVRunLoop.current.stop() }
        }
        performer.start()
        loop.run()  // no run deadline: on a virtual loop, one would end the wait at once
        #expect(seen.value.allSatisfy { $0 == nil } && seen.value.count >= 2)
    }

    @Test("on the real loop, wakeDeadline is the timer's date and the wake comes at or after it")
    func wakeDeadlineOnRealLoop() {
        let seen = onFreshThread { () -> [EVRunLoop.Instant?] in
            let loop = EVRunLoop.current
            let fire = loop.now + .milliseconds(30)
            let seen = LoopBox<[EVRunLoop.Instant?]>([])
            loop.add(EVTimer(fireAt: fire) { _ in
                seen.value += [loop.wakeDeadline, loop.wakeInstant, fire]
            }, forMode: .default)
            loop.run(mode: .default, for: .seconds(5))
            return seen.value
        }
        #expect(seen.count == 3)
        if seen.count == 3, let deadline = seen[0], let wake = seen[1] {
            #expect(deadline == seen[2])
            #expect(wake >= deadline)
        } else {
            Issue.record("no deadline: \(seen)")
        }
    }
}
