import Foundation
import RunLoopKit
import Testing

/// The `Duration` and `Instant` forms of the API's times (issue 36): each gives what its
/// `TimeInterval` or `Date` spelling gives, exact to the nanosecond, on the virtual clock.
@Suite("Duration forms")
struct DurationFormTests {
    let clock = EVVirtualClock()
    let loop: EVRunLoop
    let start: EVRunLoop.Instant

    init() {
        loop = EVRunLoop(clock: clock)
        start = clock.now
    }

    @Test("EVTimer(alignedTo: Duration) fires on the wall-clock grid plus its offset, as the seconds form does")
    func alignedDuration() {
        let wallStart = clock.wallNow  // a whole second
        clock.advance(by: .milliseconds(300))
        let phases = LoopBox<[Double]>([])
        let timer = EVTimer(alignedTo: .seconds(1), offset: .milliseconds(250), tolerance: .milliseconds(2)) { _ in
            phases.value.append((self.clock.wallNow.timeIntervalSince(wallStart) * 1000).rounded() / 1000)
        }
        #expect(timer.isAligned)
        #expect(timer.intervalDuration == .seconds(1))
        #expect(timer.toleranceDuration == .milliseconds(2))
        loop.add(timer, forMode: .default)
        loop.run(mode: .default, for: .seconds(3))
        #expect(phases.value == [1.25, 2.25, 3.25])
    }

    @Test("an aligned Duration grid keeps a step no Double second spells exactly")
    func alignedDurationIsExact() {
        let step = Duration.seconds(1) + .nanoseconds(7)
        let fires = LoopBox<[EVRunLoop.Instant]>([])
        let timer = EVTimer(alignedTo: step) { timer in fires.value.append(timer.fireInstant!) }
        #expect(timer.intervalDuration == step)
        loop.add(timer, forMode: .default)
        loop.run(mode: .default, for: .seconds(4))
        #expect(fires.value.count >= 3)
        #expect(zip(fires.value, fires.value.dropFirst()).allSatisfy { $1 - $0 == step })
    }

    @Test("interval and tolerance read as Durations, and a tolerance set as one coalesces the timer")
    func intervalAndTolerance() {
        let oneShot = EVTimer(interval: .milliseconds(30), repeats: false) { _ in }
        #expect(oneShot.intervalDuration == .zero, "a one-shot timer's interval is zero, as in CF")
        let repeating = EVTimer(interval: 0.25, repeats: true, tolerance: 0.125) { _ in }
        #expect(repeating.intervalDuration == .milliseconds(250))
        #expect(repeating.toleranceDuration == .milliseconds(125))
        repeating.toleranceDuration = .microseconds(1_500)
        #expect(repeating.tolerance == 0.0015)

        // Two one-shot timers 40 ms apart; a 50 ms tolerance on the first lets one wake serve both.
        let fired = LoopBox<[Int64]>([])
        let first = EVTimer(interval: .milliseconds(10), repeats: false) { _ in
            fired.value.append(self.clock.now.nanoseconds - self.start.nanoseconds)
        }
        first.toleranceDuration = .milliseconds(50)
        let second = EVTimer(interval: .milliseconds(50), repeats: false) { _ in
            fired.value.append(self.clock.now.nanoseconds - self.start.nanoseconds)
        }
        loop.add(first, forMode: .default)
        loop.add(second, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        #expect(fired.value == [50_000_000, 50_000_000])
    }

    @Test("run(mode:until: Instant) ends at the instant to the nanosecond; a past instant polls once")
    func runUntilInstant() {
        let fires = LoopBox(0)
        loop.add(EVTimer(interval: .milliseconds(100), repeats: true) { _ in fires.value += 1 }, forMode: .default)
        let deadline = start + .milliseconds(250) + .nanoseconds(3)
        #expect(loop.run(mode: .default, until: deadline) == .timedOut)
        #expect(clock.now == deadline)
        #expect(fires.value == 2)
        #expect(loop.run(mode: .default, until: start) == .timedOut)
        #expect(clock.now == deadline, "a deadline already past runs one pass without sleeping")
        #expect(loop.nextTimerFireInstant(forMode: .default) == start + .milliseconds(300))
        #expect(loop.nextTimerFireInstant(forMode: .init("empty")) == nil)
    }

    @Test("run(mode:until: .distantFuture Instant) means no deadline: it runs until the mode is empty")
    func runUntilDistantFuture() {
        loop.add(EVTimer(interval: .seconds(5), repeats: false) { _ in }, forMode: .default)
        #expect(loop.run(mode: .default, until: EVRunLoop.Instant.distantFuture) == .finished)
        #expect(clock.now == start + .seconds(5))
    }

    @Test("nextTimerFireInstant is the instant nextTimerFireDate names")
    func nextFireInstant() throws {
        let timer = EVTimer(fireAt: start + .milliseconds(1_500)) { _ in }
        loop.add(timer, forMode: .default)
        let instant = try #require(loop.nextTimerFireInstant(forMode: .default))
        #expect(instant == start + .milliseconds(1_500))
        let date = try #require(loop.nextTimerFireDate(forMode: .default))
        #expect(abs(date.timeIntervalSince(clock.wallNow) - 1.5) < 1e-6)
    }

    @Test("a polled pass's deadline as a Duration timeout: zero, exact, or none")
    func pollTimeout() {
        let now = EVRunLoop.Instant(nanoseconds: 1_000)
        #expect(EVRunLoop.PollDeadline.now.timeout(from: now) == .zero)
        #expect(EVRunLoop.PollDeadline.never.timeout(from: now) == nil)
        #expect(EVRunLoop.PollDeadline.at(now + .nanoseconds(1_500_001)).timeout(from: now) == .nanoseconds(1_500_001))
        #expect(EVRunLoop.PollDeadline.at(now + .nanoseconds(1_500_001)).milliseconds(from: now) == 2)
        #expect(EVRunLoop.PollDeadline.at(EVRunLoop.Instant(nanoseconds: 10)).timeout(from: now) == .zero)
        #expect(EVRunLoop.PollDeadline.at(.distantFuture).timeout(from: EVRunLoop.Instant(nanoseconds: -5))
                    == .nanoseconds(Int64.max))
    }

    @Test("the time between two instants is exact, never wrapped past Int64 nanoseconds")
    func instantDifferenceExact() {
        // A virtual clock may start anywhere in Int64 (even at Int64.min): distantFuture
        // minus a negative instant is more than Int64.max nanoseconds, and still positive.
        let early = EVRunLoop.Instant(nanoseconds: -5)
        #expect(EVRunLoop.Instant.distantFuture - early == .nanoseconds(Int64.max) + .nanoseconds(5))
        #expect(early.duration(to: .distantFuture) > .zero)
        #expect(EVRunLoop.Instant(nanoseconds: .min) - .distantFuture
                    == .nanoseconds(Int64.min) - .nanoseconds(Int64.max))
        #expect(EVRunLoop.Instant(nanoseconds: 7) - EVRunLoop.Instant(nanoseconds: 3) == .nanoseconds(4))
    }

    @Test("a tick carries its pass's wake on the loop's clock beside the wall clock")
    func tickWakeInstant() throws {
        let outcome = try onVirtualLoop { loop in
            var ticks: [EVRunLoop.Tick] = []
            for await tick in loop.ticks(every: .milliseconds(10)) {
                ticks.append(tick)
                if ticks.count == 2 { break }
            }
            return ticks
        }
        let ticks = try #require(outcome)
        for tick in ticks {
            #expect(tick.wakeInstant == tick.scheduled, "on the virtual clock the loop wakes at the fire date")
            #expect(tick.wakeDate != nil)
        }
        let made = EVRunLoop.Tick(scheduled: .init(nanoseconds: 5), wakeDate: nil, skipped: 0)
        #expect(made.wakeInstant == nil)
    }

    @Test("a Duration grid step or offset out of range, or a negative Duration tolerance, stops with a message")
    func badDurations() async {
        let zero = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(alignedTo: .zero) { _ in }
        }
        #expect(standardError(zero).contains("EVTimer(alignedTo: Duration): interval 0.0 seconds must be between 1 ns and 1e9 seconds"))
        let offset = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(alignedTo: .seconds(1), offset: .seconds(1)) { _ in }
        }
        #expect(standardError(offset).contains("EVTimer(alignedTo: Duration): offset 1.0 seconds must be in [0, 1.0 seconds)"))
        let tolerance = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVTimer(interval: .seconds(1), repeats: true) { _ in }.toleranceDuration = .milliseconds(-1)
        }
        #expect(standardError(tolerance).contains("EVTimer.toleranceDuration: tolerance -0.001 s is negative"))
    }
}
