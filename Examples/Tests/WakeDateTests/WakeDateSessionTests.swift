import Foundation
import RunLoopKit
import Synchronization
import Testing
import WakeDate

/// The wake-date scene on a virtual clock whose every reading takes 5 µs: exact figures. The
/// session lives on the main actor, so the tests do too; the virtual loop runs on the thread
/// the main actor runs on.
@MainActor
@Suite struct WakeDateSessionTests {
    /// A loop on a virtual clock, and a `Date()` stand-in that advances it 5 µs per read,
    /// as a real clock moves on between reads.
    private func makeLoop() -> (EVVirtualClock, EVRunLoop, () -> Date) {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        return (clock, loop, {
            clock.advance(by: .microseconds(5))
            return clock.wallNow
        })
    }

    @Test func bothWakeDatesHoldStillWhileDateMovesOn() {
        let (clock, loop, now) = makeLoop()
        let session = WakeDateSession(loop: loop, configuration: WakeDateConfiguration(), clock: now) {
            clock.advance(by: $0)
        }
        session.start()
        loop.run(mode: .default, for: .milliseconds(6_500))
        let summary = session.finish()

        #expect(summary.passes == 6)
        #expect(summary.calloutsPerPass == 4)
        #expect(summary.everyPassWasOneWake)
        #expect(summary.wakeDateSpreadMaxMicroseconds == 0)
        #expect(summary.observedSpreadMaxMicroseconds == 0)
        // The observer reads the clock once, right after the loop stamped its wake.
        #expect(abs(summary.observerOffsetMedianMicroseconds - 5) < 0.5)
        #expect(abs(summary.observerOffsetMaxMicroseconds - 5) < 0.5)
        // Four callouts, one read each (the first pass also reads once to register): 15 µs, 20 µs.
        #expect(abs(summary.dateSpreadMedianMicroseconds - 15) < 0.5)
        #expect(abs(summary.dateSpreadMaxMicroseconds - 20) < 0.5)
    }

    @Test func aSlowCalloutMakesTheWakeDateAfterItStale() {
        let (clock, loop, now) = makeLoop()
        let session = WakeDateSession(loop: loop, configuration: WakeDateConfiguration(slowMilliseconds: 25), clock: now) {
            clock.advance(by: $0)
        }
        session.start()
        loop.run(mode: .default, for: .milliseconds(6_500))
        let summary = session.finish()

        #expect(summary.slowPasses == 3)
        // The observer reads at 5 µs, row 1 at 10, row 2 at 15 and then works 25 ms: row 3
        // reads 25 ms + 20 µs after the wake, the block 25 ms + 25 µs.
        #expect(abs(summary.staleAfterSlowMedianMilliseconds - 25.0225) < 0.001)
        #expect(abs(summary.staleBeforeSlowMedianMilliseconds - 0.0125) < 0.001)
        let slow = session.passes[1]
        #expect(slow.isSlow && slow.slowIndex == 1)
        #expect(slow.afterSlow.map(\.callout) == ["row 3", "block"])
        #expect(slow.wakeDateSpread == 0)
    }

    @Test func theObserverRegistersLazilyInEachModeThatRuns() {
        let (_, loop, now) = makeLoop()
        let session = WakeDateSession(loop: loop, configuration: WakeDateConfiguration(slowMilliseconds: 0), clock: now)
        session.start()
        loop.run(mode: .default, for: .milliseconds(5_500))
        let summary = session.finish()

        #expect(summary.registeredModes == [EVRunLoop.Mode.default.rawValue, "modal"])
        #expect(session.passes[0].registered)
        #expect(!session.passes[2].registered)
        // Passes 1 and 4 ran the modal mode nested; its readings agree once registered.
        #expect(summary.nestedRuns == 2)
        #expect(session.passes.filter(\.ranNested).map(\.index) == [1, 4])
        #expect(summary.nestedReadings >= 4)
        #expect(abs(summary.nestedObserverOffsetMaxMicroseconds - 5) < 0.5)
        // The default mode's first pass and the modal mode's first pass are left out.
        #expect(summary.readingsBeforeRegistration == 5)
        #expect(summary.slowPasses == 0)
    }

    @Test func outsideARunTheTrackerRegistersNothing() {
        let (clock, loop, _) = makeLoop()
        let tracker = ObservedWakeDate(loop: loop) { clock.wallNow }
        #expect(tracker.date == clock.wallNow)
        #expect(tracker.registrations.isEmpty)
    }

    @Test func theTrackerRegistersOncePerMode() {
        let (clock, loop, _) = makeLoop()
        let tracker = ObservedWakeDate(loop: loop) { clock.wallNow }
        let reads = ReadLog()
        loop.add(EVTimer(interval: 0.1, repeats: true) { _ in reads.add(1) }, forMode: .default)
        let observer = EVObserver(activities: .beforeWaiting) { _, _ in _ = tracker.date }
        loop.add(observer, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        #expect(tracker.registrations.map(\.mode) == [.default])
        #expect(reads.value == 10)
    }
}

/// A counter a `@Sendable` timer callout may bump.
private final class ReadLog: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ amount: Int) { count.add(amount, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
}
