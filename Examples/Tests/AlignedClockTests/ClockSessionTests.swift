import AlignedClock
import Foundation
import RunLoopKit
import Synchronization
import Testing

/// The three strategies and the lead, driven on a virtual clock: exact figures, no sleeping.
@Suite struct ClockSessionTests {
    /// A loop on a virtual clock whose wall clock reads a quarter second past a whole second.
    private func makeLoop() -> (EVVirtualClock, EVRunLoop) {
        let clock = EVVirtualClock()
        clock.advance(by: .milliseconds(250))
        return (clock, EVRunLoop(clock: clock))
    }

    @Test func compareMeasuresEachStrategy() throws {
        let (_, loop) = makeLoop()
        let session = ClockSession(loop: loop, configuration: ClockConfiguration(compare: true, naiveStartDelay: 0.33))
        session.start()
        loop.run(mode: .default, for: .seconds(10))
        let summary = session.finish()

        #expect(summary.strategies.map(\.strategy) == [.naive, .polling, .aligned])
        let aligned = try #require(summary.report(for: .aligned))
        #expect(aligned.updates == 10)
        #expect(aligned.phaseErrorMedianMs < 0.001)
        #expect(aligned.phaseErrorP99Ms < 0.001)
        #expect(abs(aligned.wakeupsPerSecond - 1) < 0.01)

        // Started 0.58 s past a second: it shows each second 580 ms late, 420 ms before the next.
        let naive = try #require(summary.report(for: .naive))
        #expect(naive.updates == 9)
        #expect(abs(naive.lagMedianMs - 580) < 0.001)
        #expect(abs(naive.phaseErrorMedianMs - 420) < 0.001)
        #expect(abs(naive.wakeupsPerSecond - 1) < 0.11)

        // Polls at .35, .45, ...: each new second appears at .05, ten wakeups a second.
        let polling = try #require(summary.report(for: .polling))
        #expect(polling.updates == 10)
        #expect(abs(polling.lagMedianMs - 50) < 0.001)
        #expect(abs(polling.lagMaxMs - 50) < 0.001)
        #expect(abs(polling.wakeupsPerSecond - 10) < 0.11)

        // No two timers share a wake here (0.58 is off the polling grid): 1 + 1 + 10 per second.
        #expect(abs(summary.loopWakeupsPerSecond - 12) < 0.3)
    }

    @Test func alignedTickShowsTheSecondItWasScheduledFor() {
        let (_, loop) = makeLoop()
        let session = ClockSession(loop: loop, configuration: ClockConfiguration(compare: false, naiveStartDelay: 0))
        session.start()
        loop.run(mode: .default, for: .seconds(3))
        _ = session.finish()
        let start = Int64(EVVirtualClock().wallNow.timeIntervalSince1970)
        #expect(session.updates[.aligned]?.map(\.shownSecond) == [start + 1, start + 2, start + 3])
        #expect(session.alignedTickPhases.count == 3)
    }

    @Test func alignedTimerRealignsWhenTheWallClockIsSet() {
        let (clock, loop) = makeLoop()
        let session = ClockSession(loop: loop, configuration: ClockConfiguration(compare: false, naiveStartDelay: 0))
        session.start()
        // 1.5 s in (wall x+1.75), the wall clock is set 0.4 s ahead: second x+2 has passed.
        loop.add(EVTimer(interval: 1.5, repeats: false) { _ in
            clock.setWallClock(to: clock.wallNow.addingTimeInterval(0.4))
        }, forMode: .default)
        loop.run(mode: .default, for: .seconds(5))
        _ = session.finish()

        // Back on the new clock's whole seconds from x+3 on. (Whether the tick scheduled for
        // the old x+2 still fires depends on when the loop notices the change: the virtual
        // clock notices after its next wait, the libev loop at once.)
        let start = Int64(EVVirtualClock().wallNow.timeIntervalSince1970)
        let updates = session.updates[.aligned] ?? []
        #expect(updates.first?.shownSecond == start + 1)
        #expect(updates.suffix(3).map(\.shownSecond) == [start + 3, start + 4, start + 5])
        #expect(updates.suffix(3).allSatisfy { abs($0.lag) < 1e-6 })
        #expect(zip(updates, updates.dropFirst()).allSatisfy { $0.shownSecond < $1.shownSecond })
    }

    @Test func automaticLeadMakesThePublishedValueLandOnTheSecond() throws {
        let (clock, loop) = makeLoop()
        let configuration = ClockConfiguration(compare: false, publishCost: 0.2, lead: .automatic, naiveStartDelay: 0)
        let session = ClockSession(loop: loop, configuration: configuration) { clock.advance(by: $0) }
        session.start()
        loop.run(mode: .default, for: .seconds(10))
        let summary = session.finish()

        #expect(summary.strategies.map(\.strategy) == [.aligned, .alignedWithLead])
        #expect(abs(try #require(summary.lead) - 0.2) < 1e-9)
        let withoutLead = try #require(summary.report(for: .aligned))
        #expect(abs(withoutLead.lagMedianMs - 200) < 0.001)
        let withLead = try #require(summary.report(for: .alignedWithLead))
        #expect(withLead.updates >= 9)
        #expect(withLead.phaseErrorMedianMs < 0.001)
        #expect(abs(withLead.lagMaxMs) < 0.001)
    }

    @Test func handTunedLeadLeavesTheDifference() throws {
        let (clock, loop) = makeLoop()
        let configuration = ClockConfiguration(compare: false, publishCost: 0.2, lead: .fixed(0.18), naiveStartDelay: 0)
        let session = ClockSession(loop: loop, configuration: configuration) { clock.advance(by: $0) }
        session.start()
        loop.run(mode: .default, for: .seconds(5))
        let summary = session.finish()
        let withLead = try #require(summary.report(for: .alignedWithLead))
        #expect(abs(withLead.lagMedianMs - 20) < 0.001)
        #expect(summary.lead == 0.18)
    }

    @Test func automaticLeadFollowsAChangingCost() throws {
        let (clock, loop) = makeLoop()
        let configuration = ClockConfiguration(compare: false, publishCost: 0.1, lead: .automatic, naiveStartDelay: 0)
        // The real work turns out 50 ms slower than the calibration tick measured.
        let calls = Counter()
        let session = ClockSession(loop: loop, configuration: configuration) { duration in
            clock.advance(by: calls.next() == 0 ? duration : duration + .milliseconds(50))
        }
        session.start()
        loop.run(mode: .default, for: .seconds(12))
        let summary = session.finish()
        #expect(abs(try #require(summary.lead) - 0.15) < 1e-9)
        let withLead = try #require(session.updates[.alignedWithLead]?.last)
        #expect(abs(withLead.lag) < 1e-6)
    }
}

/// A thread-safe call counter for `@Sendable` work closures.
private final class Counter: Sendable {
    private let value = Mutex(0)

    /// Returns the count so far and adds one.
    func next() -> Int {
        value.withLock { count in
            defer { count += 1 }
            return count
        }
    }
}
