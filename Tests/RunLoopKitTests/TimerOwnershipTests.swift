import Foundation
@testable import RunLoopKit
import Testing

/// Who keeps a timer alive: its modes' queues own it, and a firing pass holds it unretained,
/// so a queue that lets go of it during its callout must leave the release to the pass.
@Suite("Timer ownership")
struct TimerOwnershipTests {
    let clock = EVVirtualClock()
    let loop: EVRunLoop
    let start: EVRunLoop.Instant

    init() {
        loop = EVRunLoop(clock: clock)
        start = clock.now
    }

    /// A weak reference, to see when a timer is freed.
    final class WeakTimer: @unchecked Sendable {
        // Safe: written and read on the test's thread only (the virtual loop runs on it).
        weak var timer: EVTimer?
    }

    @Test("a repeating timer nobody holds, removed from its only mode by its own callout, finishes its fire, then is freed")
    func removedInOwnCallout() {
        let weak = WeakTimer()
        let log = Recorder()
        do {
            let timer = EVTimer(fireAt: start + .milliseconds(10), interval: .milliseconds(10), repeats: true) { timer in
                self.loop.remove(timer, forMode: .default)
                log.append("fired, valid \(timer.isValid)")
                timer.setFireInstant(self.start + .milliseconds(30))  // touches the timer after its removal
            }
            weak.timer = timer
            loop.add(timer, forMode: .default)
        }
        #expect(weak.timer != nil)  // the queue owns it
        #expect(loop.run(mode: .default, for: .seconds(1)) == .finished)
        #expect(log.lines == ["fired, valid true"])
        #expect(weak.timer == nil)
    }

    @Test("a timer nobody holds, in two modes, invalidated by its own callout, is freed after the fire")
    func invalidatedInTwoModes() {
        let weak = WeakTimer()
        let log = Recorder()
        loop.addCommonMode("other")
        do {
            let timer = EVTimer(fireAt: start + .milliseconds(10), interval: .milliseconds(10), repeats: true) { timer in
                timer.invalidate()
                log.append("fired")
            }
            weak.timer = timer
            loop.add(timer, forMode: .common)
        }
        #expect(loop.run(mode: .default, for: .seconds(1)) == .finished)
        #expect(log.lines == ["fired"])
        #expect(weak.timer == nil)
    }

    @Test("a one-shot timer nobody holds is freed after its fire")
    func oneShotFreed() {
        let weak = WeakTimer()
        do {
            let timer = EVTimer(fireAt: start + .milliseconds(10)) { _ in }
            weak.timer = timer
            loop.add(timer, forMode: .default)
        }
        loop.run(mode: .default, for: .milliseconds(20))
        #expect(weak.timer == nil)
    }

    @Test("a timer invalidated on its loop's thread after leaving every mode also leaves .common")
    func invalidateOutOfEveryMode() {
        let timer = EVTimer(fireAt: start + .milliseconds(10)) { _ in }
        loop.add(timer, forMode: .common)
        loop.remove(timer, forMode: .default)  // still added to .common, in no mode
        #expect(loop.contains(timer, inMode: .common))
        timer.invalidate()
        #expect(!loop.contains(timer, inMode: .common))
        loop.addCommonMode("later")
        #expect(!loop.contains(timer, inMode: "later"))
    }

    @Test("tie-breakers order like creation sequences, and are equal only outside their window")
    func tieWindow() {
        var window = TieWindow()
        let first: UInt64 = 5_000_000_000
        let middle = window.tie(for: first)
        #expect(window.tie(for: first - 1) < middle)
        #expect(window.tie(for: first + 1) > middle)
        #expect(window.tie(for: first - (1 << 31)) == 0)
        #expect(window.tie(for: 3) == 0)  // long before the window: equal ties, full sequences decide
        #expect(window.tie(for: first + (1 << 33)) == UInt32.max)
        #expect(window.tie(for: first + (1 << 33) + 1) == UInt32.max)
        var early = TieWindow()
        #expect(early.tie(for: 1) == 1)  // early in the process the window starts at 0
        #expect(early.tie(for: 2) == 2)
    }

    @Test("equal fire dates fire in creation order, also for timers added in reverse")
    func equalDatesCreationOrder() {
        let log = Recorder()
        let timers = (0..<50).map { index in
            EVTimer(fireAt: start + .milliseconds(10), interval: .milliseconds(10), repeats: true) { _ in
                log.append("\(index)")
            }
        }
        for timer in timers.reversed() { loop.add(timer, forMode: .default) }
        loop.run(mode: .default, for: .milliseconds(25))
        #expect(log.lines == (0..<50).map { "\($0)" } + (0..<50).map { "\($0)" })
        for timer in timers { timer.invalidate() }
    }

    /// A weak reference to a loop's shared state (``LoopShared``), to see when it is freed.
    final class WeakShared: @unchecked Sendable {
        // Safe: written and read on the test's thread only.
        weak var shared: LoopShared?
    }

    @Test("a timer holds its loop's shared state, not its loop: the loop can go first, and the shared state goes with the last timer")
    func linkHoldsSharedNotLoop() {
        let weak = WeakShared()
        let timer = EVTimer(fireAt: start + .seconds(1), interval: .seconds(1), repeats: true) { _ in }
        do {
            let other = EVRunLoop(clock: clock)
            other.add(timer, forMode: .default)
            weak.shared = other.shared
            #expect(timer.loop === other)
        }
        #expect(timer.loop == nil)  // the loop is gone; its shared state is not
        #expect(weak.shared != nil)
        #expect(timer.isValid)
        timer.invalidate()  // reaches no loop, and does not crash
        #expect(!timer.isValid)
        withExtendedLifetime(timer) {}
    }

    @Test("the shared state a timer held is freed with the timer")
    func sharedFreedWithTimer() {
        let weak = WeakShared()
        do {
            let other = EVRunLoop(clock: clock)
            let timer = EVTimer(fireAt: start + .seconds(1), interval: .seconds(1), repeats: true) { _ in }
            other.add(timer, forMode: .default)
            weak.shared = other.shared
            timer.invalidate()
        }
        #expect(weak.shared == nil)
    }

    final class Handoff: @unchecked Sendable {
        // Safe: filled by the test's thread, then used and emptied by one other thread before
        // it signals the test's thread, which waits for that.
        var loop: EVRunLoop?
        var timer: EVTimer?

        init(loop: EVRunLoop?, timer: EVTimer) { (self.loop, self.timer) = (loop, timer) }
    }

    @Test("a loop's shared state outlives the loop while a timer claimed on its thread or another does, and no longer",
          arguments: [true, false])
    func sharedLiveWhileLinked(loopGoesFirst: Bool) {
        let weak = WeakShared()
        var timers: [EVTimer] = []
        var loop: EVRunLoop? = EVRunLoop(clock: clock)
        weak.shared = loop!.shared
        for index in 0..<3_000 {  // past the engine's stash of 1,024 link references, twice
            let timer = EVTimer(fireAt: start + .seconds(1), interval: .seconds(1), repeats: true) { _ in }
            if index % 3 == 0 {
                // A claim from another thread counts its reference at once. The thread lets go
                // of the loop and the timer before it signals, so that both go when the test
                // lets them.
                let handoff = Handoff(loop: loop, timer: timer)
                let finished = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    handoff.loop!.add(handoff.timer!, forMode: .default)
                    (handoff.loop, handoff.timer) = (nil, nil)
                    finished.signal()
                }
                finished.wait()
            } else {
                loop!.add(timer, forMode: .default)
            }
            timers.append(timer)
        }
        if loopGoesFirst {
            loop = nil
            #expect(weak.shared != nil)
            timers.removeLast(2_999)
            #expect(weak.shared != nil)
            timers = []
        } else {
            for timer in timers { timer.invalidate() }
            timers = []
            #expect(weak.shared != nil)  // the loop holds it
            loop = nil
        }
        #expect(weak.shared == nil)
    }
}
