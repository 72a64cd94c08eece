import Foundation
import RunLoopKit
import Testing

/// Timer semantics under the virtual clock: exact instants, no sleeping.
@Suite("Timers")
struct TimerTests {
    let clock = EVVirtualClock()
    let loop: EVRunLoop
    let start: EVRunLoop.Instant

    init() {
        loop = EVRunLoop(clock: clock)
        start = clock.now
    }

    /// Milliseconds since the test's start.
    func ms(_ instant: EVRunLoop.Instant) -> Int64 { (instant.nanoseconds - start.nanoseconds) / 1_000_000 }

    @Test("a repeating timer's fire dates never drift: 10 ms for 10 s, even when callouts run late")
    func noDrift() {
        let scheduled = LoopBox<[Int64]>([])
        let timer = EVTimer(interval: .milliseconds(10), repeats: true) { timer in
            scheduled.value.append(timer.fireInstant!.nanoseconds - self.start.nanoseconds)
            self.clock.advance(by: .microseconds(3_700))  // each callout takes 3.7 ms
        }
        loop.add(timer, forMode: .default)
        loop.run(mode: .default, for: .seconds(10))
        #expect(scheduled.value.count == 1000)
        #expect(scheduled.value == (1...1000).map { Int64($0) * 10_000_000 })
    }

    @Test("missed fires are skipped, never burst; the schedule stays on its grid")
    func skipMissed() {
        let fires = LoopBox<[Int64]>([])
        loop.add(EVTimer(fireAt: start + .milliseconds(100), interval: .milliseconds(100), repeats: true) { _ in
            fires.value.append(self.ms(self.clock.now))
            if fires.value.count == 2 { self.clock.advance(by: .milliseconds(350)) }  // a slow callout
        }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(1000))
        // Fired at 200, took until 550: 300, 400 and 500 are skipped; next is 600 (CF's rule).
        #expect(fires.value == [100, 200, 600, 700, 800, 900, 1000])
    }

    @Test("a timer never fires early, and within its tolerance when the loop is idle")
    func tolerance() {
        let fires = LoopBox<[Int64]>([])
        loop.add(EVTimer(fireAt: start + .milliseconds(100), tolerance: .milliseconds(50)) { _ in
            fires.value.append(self.ms(self.clock.now))
        }, forMode: .default)
        loop.add(EVTimer(fireAt: start + .milliseconds(130)) { _ in
            fires.value.append(self.ms(self.clock.now))
        }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        // One wake at 130 serves both: the first is 30 ms late, inside its 50 ms.
        #expect(fires.value == [130, 130])
        #expect(loop.statistics.wakeups == 1)
    }

    @Test("a tolerant timer with nothing to share a wake with fires on time")
    func loneTolerantTimer() {
        let fires = LoopBox<[Int64]>([])
        loop.add(EVTimer(fireAt: start + .milliseconds(100), interval: .milliseconds(100), repeats: true,
                         tolerance: .milliseconds(50)) { _ in
            fires.value.append(self.ms(self.clock.now))
        }, forMode: .default)
        loop.add(EVTimer(fireAt: start + .milliseconds(320), tolerance: .milliseconds(20)) { _ in
            fires.value.append(-self.ms(self.clock.now))
        }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(450))
        // The 300 ms fire may wait until 340 ms for the one-shot due at 320: one wake, at 320.
        #expect(fires.value == [100, 200, 320, -320, 400])
    }

    @Test("done when: 1,000 timers, 0.2 s, random phases, tolerance 0.1 s wake at most 10.5 times a second")
    func coalescing() {
        var rng = SplitMix(seed: 42)
        let lateness = LoopBox<[Int64]>([])
        for _ in 0..<1000 {
            let phase = Int64.random(in: 0..<200_000_000, using: &rng)
            loop.add(EVTimer(fireAt: start + .nanoseconds(phase), interval: .milliseconds(200), repeats: true,
                             tolerance: .milliseconds(100)) { timer in
                lateness.value.append(self.clock.now.nanoseconds - timer.fireInstant!.nanoseconds)
            }, forMode: .default)
        }
        loop.run(mode: .default, for: .seconds(10))
        let perSecond = Double(loop.statistics.wakeups) / 10
        #expect(perSecond <= 10.5)
        #expect(lateness.value.count >= 49_000)
        #expect(lateness.value.min()! >= 0)
        #expect(lateness.value.max()! <= 100_000_000)
    }

    @Test("done when: with tolerance 0, one wake per distinct fire date")
    func oneWakePerDate() {
        var rng = SplitMix(seed: 7)
        var dates = Set<Int64>()
        for _ in 0..<1000 {
            let phase = Int64.random(in: 0..<200, using: &rng) * 1_000_000
            for k in 0..<50 { dates.insert(phase + Int64(k) * 200_000_000) }
            loop.add(EVTimer(fireAt: start + .nanoseconds(phase), interval: .milliseconds(200), repeats: true) { _ in },
                     forMode: .default)
        }
        loop.run(mode: .default, for: .nanoseconds(9_999_000_000))
        let within = dates.filter { $0 < 9_999_000_000 }.count
        #expect(loop.statistics.wakeups == within + 1)  // + the final wait to the run's deadline
    }

    @Test("a timer in .default does not fire while tracking runs; in .common it does")
    func modes() {
        let tracking = EVRunLoop.Mode("tracking")
        loop.addCommonMode(tracking)
        let log = Recorder()
        loop.add(EVTimer(fireAt: start + .milliseconds(100), interval: .milliseconds(100), repeats: true) { _ in
            log.append("default \(self.ms(self.clock.now))")
        }, forMode: .default)
        loop.add(EVTimer(fireAt: start + .milliseconds(100), interval: .milliseconds(100), repeats: true) { _ in
            log.append("common \(self.ms(self.clock.now))")
        }, forMode: .common)
        loop.add(EVTimer(fireAt: start + .milliseconds(150)) { _ in
            self.loop.run(mode: tracking, for: .milliseconds(300))  // "scrolling" until 450
        }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(500))
        #expect(log.lines == [
            "default 100", "common 100",
            "common 200", "common 300", "common 400",  // inside tracking
            "default 450",  // one late fire for the fires missed while tracking: 200, 300, 400
            "default 500", "common 500",  // equal dates: creation order
        ])
    }

    @Test("one timer in two modes fires once per fire date")
    func twoModes() {
        let log = Recorder()
        let timer = EVTimer(fireAt: start + .milliseconds(10), interval: .milliseconds(10), repeats: true) { _ in
            log.append("\(self.ms(self.clock.now))")
        }
        loop.add(timer, forMode: .default)
        loop.add(timer, forMode: "other")
        loop.run(mode: .default, for: .milliseconds(25))
        loop.run(mode: "other", for: .milliseconds(20))
        #expect(log.lines == ["10", "20", "30", "40"])
    }

    @Test("fireDate set inside the callout is kept; a date in the past means now, so it fires again (CF)")
    func fireDateInCallout() {
        let log = Recorder()
        let count = LoopBox(0)
        loop.add(EVTimer(fireAt: start + .milliseconds(100), interval: .milliseconds(100), repeats: true) { timer in
            log.append("\(self.ms(self.clock.now))")
            count.value += 1
            if count.value == 1 { timer.fireDate = timer.fireDate.addingTimeInterval(0.25) }  // 350
            if count.value == 2 { timer.fireDate = timer.fireDate.addingTimeInterval(-0.3) }  // 50: past, so now
        }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(500))
        #expect(log.lines == ["100", "350", "350", "450"])
    }

    @Test("fire() runs the callout now and keeps a repeating schedule; a one-shot is invalidated")
    func fireNow() {
        let log = Recorder()
        let repeating = EVTimer(fireAt: start + .milliseconds(100), interval: .milliseconds(100), repeats: true) { _ in
            log.append("r \(self.ms(self.clock.now))")
        }
        let once = EVTimer(fireAt: start + .milliseconds(100)) { _ in log.append("once") }
        loop.add(repeating, forMode: .default)
        loop.add(once, forMode: .default)
        loop.add(EVTimer(fireAt: start + .milliseconds(50)) { _ in
            repeating.fire()
            once.fire()
        }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(200))
        #expect(log.lines == ["r 50", "once", "r 100", "r 200"])
        #expect(!once.isValid)
        #expect(repeating.isValid)
    }

    @Test("a non-positive repeating interval becomes 0.1 ms, as Foundation documents")
    func intervalFloor() {
        let timer = EVTimer(interval: 0, repeats: true) { _ in }
        #expect(timer.interval == 0.0001)
        #expect(EVTimer(interval: -3, repeats: false) { _ in }.interval == 0)
    }

    @Test("invalidating a timer from its own callout, and another timer due in the same pass")
    func invalidateInCallout() {
        let log = Recorder()
        let victimBox = LoopBox<EVTimer?>(nil)
        // Created first, so it fires first among timers due at the same date.
        let killer = EVTimer(fireAt: start + .milliseconds(10), interval: .milliseconds(10), repeats: true) { timer in
            log.append("killer")
            victimBox.value?.invalidate()
            timer.invalidate()
        }
        let victim = EVTimer(fireAt: start + .milliseconds(10), label: "victim") { _ in log.append("victim") }
        victimBox.value = victim
        loop.add(killer, forMode: .default)
        loop.add(victim, forMode: .default)
        #expect(loop.run(mode: .default, for: .seconds(1)) == .finished)
        #expect(log.lines == ["killer"])
    }

    @Test("aligned timers fire on wall-clock multiples and re-align when the clock is set")
    func aligned() {
        let wallStart = clock.wallNow  // a whole second
        clock.advance(by: .milliseconds(300))
        let phases = LoopBox<[Double]>([])
        loop.add(EVTimer(alignedTo: 1, offset: 0.25) { _ in
            let t = self.clock.wallNow.timeIntervalSince(wallStart)
            phases.value.append((t * 1000).rounded() / 1000)
            if phases.value.count == 2 {
                self.clock.setWallClock(to: self.clock.wallNow.addingTimeInterval(100.5))  // someone sets the clock
            }
        }, forMode: .default)
        loop.run(mode: .default, for: .seconds(4))
        // 1.25 and 2.25; then the clock jumps to 102.75; the next grid point is 103.25.
        #expect(phases.value == [1.25, 2.25, 103.25, 104.25])
    }

    @Test("a wall clock set by another callout re-aligns before the old deadline is reached")
    func realignFromAnotherCallout() {
        let wallStart = clock.wallNow
        let phases = LoopBox<[Double]>([])
        loop.add(EVTimer(alignedTo: 1) { _ in
            phases.value.append(self.clock.wallNow.timeIntervalSince(wallStart))
        }, forMode: .default)
        loop.add(EVTimer(fireAt: start + .milliseconds(1500)) { _ in
            self.clock.setWallClock(to: self.clock.wallNow.addingTimeInterval(0.4))  // now 1.9
        }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(3200))
        // Ticks at wall 1 and 2 (monotonic 1 and 1.6), then 3 (monotonic 2.6): none off the grid.
        #expect(phases.value.map { ($0 * 1000).rounded() / 1000 } == [1, 2, 3])
    }
}
