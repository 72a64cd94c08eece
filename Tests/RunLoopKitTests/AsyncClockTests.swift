import Foundation
import RunLoopKit
import Testing
import RunLoopKitTestSupport

/// `loop.clock`, the tick sequences, and `EVVirtualClock` as a `Clock`.
@Suite("Async clocks and ticks", .serialized, .timeLimit(.minutes(10)))
struct AsyncClockTests {
    @Test("1,000 tasks sleeping 0.2 s with 0.1 s tolerance share about ten wakes a second")
    func sleepersCoalesce() throws {
        let outcome = try onVirtualLoop { loop in
            let clock = loop.clock
            let start = clock.now
            let stopAt = start + .seconds(3)
            let lateness = LoopBox<[Duration]>([])  // the tasks all run on the loop's thread
            let finished = LoopBox(0)
            for index in 0..<1_000 {
                Task(executorPreference: loop) {
                    try await clock.sleep(for: .milliseconds(Double(index) * 0.2))  // random-ish phases
                    while clock.now < stopAt {
                        let deadline = clock.now + .milliseconds(200)
                        try await clock.sleep(until: deadline, tolerance: .milliseconds(100))
                        lateness.value.append(clock.now - deadline)
                    }
                    finished.value += 1
                }
            }
            try await clock.sleep(until: start + .milliseconds(500))  // past the staggered, exact first sleeps
            let wakesBefore = loop.statistics.wakeups
            try await clock.sleep(until: start + .milliseconds(2_500))
            let wakes = loop.statistics.wakeups - wakesBefore
            try await clock.sleep(until: stopAt + .milliseconds(500))  // every task's last sleep ended
            return (wakes, lateness.value, finished.value)
        }
        let (wakes, lateness, finished) = try #require(outcome)
        // Ten a second, on virtual time exactly; a wake per sleep would be over 5,000.
        #expect(wakes == 20, "wakes in 2 s: \(wakes)")
        #expect(finished == 1_000)
        #expect(lateness.count > 5_000)
        #expect(lateness.allSatisfy { $0 >= .zero && $0 <= .milliseconds(100) }, "resumed within the tolerance")
    }

    @Test("a sleep's timer ends its tolerance early by the hand-off allowance, so the task resumes within it")
    func sleepLeavesHandOffAllowance() {
        let wakes = onFreshThread {
            let clock = EVVirtualClock()
            let loop = EVRunLoop(clock: clock)
            let start = clock.now
            let wakes = LoopBox<[Duration]>([])
            loop.add(EVObserver(activities: .afterWaiting) { _, _ in wakes.value.append(clock.now - start) }, forMode: .default)
            // A timer whose date falls in the last millisecond of the sleep's tolerance: one wake
            // at 199 ms would serve both, but the sleeping task would only resume after its
            // timer's callout, at the very end of (or past) the 200 ms it allowed.
            loop.add(EVTimer(fireAt: start + .milliseconds(199), tolerance: .milliseconds(50)) { _ in }, forMode: .default)
            Task(executorPreference: loop) {
                try await loop.clock.sleep(until: start + .milliseconds(100), tolerance: .milliseconds(100))
            }
            // The task's first job (which adds the sleep's timer) runs in a polling pass.
            while loop.statistics.jobsRun == 0 { loop.run(mode: .default, for: .zero) }
            loop.run(mode: .default, for: .seconds(1))
            return wakes.value
        }
        #expect(wakes == [.milliseconds(100), .milliseconds(199)])
    }

    @Test("cancelling a task blocked in loop.clock.sleep resumes it at once and leaves no timer")
    func cancelSleep() throws {
        let outcome = try onVirtualLoop { loop in
            let sleeper = Task(executorPreference: loop) { () -> (Bool, EVRunLoop.Instant) in
                do {
                    try await loop.clock.sleep(for: .seconds(30))
                    return (false, loop.now)
                } catch {
                    return (error is CancellationError, loop.now)
                }
            }
            try await loop.clock.sleep(for: .milliseconds(50))  // the sleeper is asleep
            let timerWhileAsleep = loop.nextTimerFireDate(forMode: .default) != nil
            let cancelledAt = loop.now
            sleeper.cancel()
            let (cancelled, resumedAt) = await sleeper.value
            return (timerWhileAsleep, cancelled, resumedAt - cancelledAt, loop.nextTimerFireDate(forMode: .default))
        }
        let (timerWhileAsleep, cancelled, resumedAfter, timerAfter) = try #require(outcome)
        #expect(timerWhileAsleep)
        #expect(cancelled)
        #expect(resumedAfter == .zero, "resumed without waiting for its timer")
        #expect(timerAfter == nil)
    }

    @Test("a sleep in an already cancelled task throws without adding a timer")
    func sleepWhenCancelled() async throws {
        let thread = LoopThread()
        defer { thread.stop() }
        let clock = thread.loop.clock
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(30))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(thread.onLoop { thread.loop.nextTimerFireDate(forMode: .default) } == nil)
    }

    @Test("ticks after a consumer stall report the skipped ticks and do not burst")
    func ticksAfterStall() throws {
        let outcome = try onVirtualLoop { loop in
            let start = loop.now
            var ticks = loop.ticks(every: .milliseconds(100)).makeAsyncIterator()
            let first = try #require(await ticks.next())
            try await loop.clock.sleep(until: start + .milliseconds(550))  // the consumer stalls
            let afterStall = try #require(await ticks.next())
            let readAt = loop.now
            let next = try #require(await ticks.next())
            return (first.scheduled - start, afterStall.scheduled - first.scheduled, afterStall, loop.now - readAt, next)
        }
        let (first, stallGap, afterStall, waited, next) = try #require(outcome)
        #expect(first == .milliseconds(100))
        #expect(stallGap == .milliseconds(400))
        // Ticks at 200, 300, 400 and 500 ms came while the consumer slept: the last one is read.
        #expect(afterStall.skipped == 3)
        #expect(next.skipped == 0)
        #expect(next.scheduled - afterStall.scheduled == .milliseconds(100))
        #expect(waited == .milliseconds(50), "the next tick waits for its date (600 ms)")
    }

    @Test("whole-second ticks after a 2.5 s consumer stall: the next element reports the skipped tick, no burst")
    func alignedTicksAfterStall() throws {
        let outcome = try onVirtualLoop { loop in
            var ticks = loop.ticks(alignedTo: .seconds(1)).makeAsyncIterator()
            let first = try #require(await ticks.next())
            try await loop.clock.sleep(until: first.scheduled + .milliseconds(2_500))  // the consumer stalls
            let afterStall = try #require(await ticks.next())
            let readAt = loop.now
            let next = try #require(await ticks.next())
            return (first, afterStall, loop.now - readAt, next)
        }
        let (first, afterStall, waited, next) = try #require(outcome)
        // Read 0.5 s after the tick of first + 2 s, which replaced the one of first + 1 s.
        #expect(afterStall.skipped == 1)
        #expect(afterStall.scheduled - first.scheduled == .seconds(2))
        #expect(waited == .milliseconds(500), "the next tick waits for its second")
        #expect(next.skipped == 0)
        #expect(next.scheduled - afterStall.scheduled == .seconds(1))
    }

    @Test("whole-second ticks land on the second")
    func alignedTicks() throws {
        let outcome = try onVirtualLoop { loop in
            var phases: [Double] = []
            for await tick in loop.ticks(alignedTo: .seconds(1)) {
                let wake = try #require(tick.wakeDate).timeIntervalSince1970
                phases.append(wake - wake.rounded(.down))
                if phases.count == 3 { break }
            }
            return phases
        }
        let phases = try #require(outcome)
        #expect(phases == [0, 0, 0])
    }

    @Test("a task's ticks end when the task is cancelled, and the timer with them")
    func ticksEndOnCancel() throws {
        let outcome = try onVirtualLoop { loop in
            let start = loop.now
            let consumer = Task(executorPreference: loop) {
                var count = 0
                for await _ in loop.ticks(every: .milliseconds(10)) { count += 1 }
                return count
            }
            try await loop.clock.sleep(until: start + .milliseconds(105))
            consumer.cancel()
            let count = await consumer.value
            try await loop.clock.sleep(for: .milliseconds(50))
            return (count, loop.nextTimerFireDate(forMode: .default))
        }
        let (count, timerAfter) = try #require(outcome)
        #expect(count == 10)  // at 10, 20, ..., 100 ms
        #expect(timerAfter == nil)
    }

    // MARK: EVVirtualClock as a Clock

    @Test("a debouncer written against any Clock<Duration>, driven by EVVirtualClock without yields")
    func debouncerOnVirtualClock() async {
        let clock = EVVirtualClock()
        let start = clock.now
        let (outputs, continuation) = AsyncStream.makeStream(of: (String, Duration).self)
        let debouncer = ClockDebouncer(clock: clock, delay: .milliseconds(300)) { value in
            continuation.yield((value, clock.now - start))
        }
        debouncer.input("a")
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(200))
        debouncer.input("ab")  // cancels the sleep for "a"
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(299))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        var received = outputs.makeAsyncIterator()
        let output = await received.next()
        #expect(output?.0 == "ab")
        #expect(output?.1 == .milliseconds(500))
    }

    @Test("a sleeper cancelled as soon as waitForSleepers saw it is gone when cancel() returns")
    func cancelledSleeperLeavesAtOnce() async {
        // The debouncer test's handshake: a test that waits for a sleeper, then cancels it and
        // waits for the next one, must not count the cancelled one.
        let clock = EVVirtualClock()
        var stale = 0
        for _ in 0..<20_000 {
            let task = Task { try? await clock.sleep(for: .seconds(1)) }
            await clock.waitForSleepers()
            task.cancel()
            if clock.sleeperCount != 0 { stale += 1 }
            await task.value
        }
        #expect(stale == 0)
    }

    @Test("EVVirtualClock.sleep resumes when a loop on the clock advances past it")
    func virtualSleepResumedByLoop() async {
        let clock = EVVirtualClock()
        let start = clock.now
        let sleeper = Task { try? await clock.sleep(until: start + .seconds(5)); return clock.now }
        await clock.waitForSleepers()
        let loopThread = onFreshThread {
            let loop = EVRunLoop(clock: clock)
            loop.add(EVTimer(interval: .seconds(10), repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .seconds(60))
            return clock.now
        }
        #expect(loopThread == start + .seconds(10))
        #expect(await sleeper.value == start + .seconds(10))  // resumed by the jump past 5 s
    }

    // MARK: Virtual time on a loop

    @Test("a debouncer on a virtual loop: advance(by:) fires at exact instants across an empty mode")
    func debouncerOnVirtualLoop() {
        onFreshThread {
            let clock = EVVirtualClock()
            let loop = EVRunLoop(clock: clock)
            let start = clock.now
            let debouncer = TimerDebouncer(loop: loop, delay: .milliseconds(300))
            debouncer.input("a")
            loop.advance(by: .milliseconds(100))
            debouncer.input("ab")
            loop.advance(by: .seconds(1))  // fires at 400 ms; the mode is empty from then on
            #expect(clock.now == start + .milliseconds(1_100))
            debouncer.input("abc")
            loop.advance(by: .milliseconds(299))
            #expect(debouncer.fired.count == 1)
            loop.advance(by: .milliseconds(1))
            #expect(debouncer.fired.map(\.value) == ["ab", "abc"])
            #expect(debouncer.fired.map { $0.at - start } == [.milliseconds(400), .milliseconds(1_400)])
        }
    }

    @Test("advance(by:) on an empty mode still moves the clock")
    func advanceEmptyMode() {
        onFreshThread {
            let clock = EVVirtualClock()
            let loop = EVRunLoop(clock: clock)
            let start = clock.now
            loop.advance(by: .seconds(3))
            #expect(clock.now == start + .seconds(3))
        }
    }

    @Test("a timer's fire instant can be set exactly, and restarted")
    func setFireInstant() {
        onFreshThread {
            let clock = EVVirtualClock()
            let loop = EVRunLoop(clock: clock)
            let start = clock.now
            let fired = LoopBox<[EVRunLoop.Instant]>([])
            let timer = EVTimer(interval: .seconds(100), repeats: true) { _ in fired.value.append(clock.now) }
            loop.add(timer, forMode: .default)
            timer.setFireInstant(start + .nanoseconds(1_234_567))
            loop.advance(by: .milliseconds(2))
            timer.restart(after: .milliseconds(5))
            loop.advance(by: .milliseconds(10))
            #expect(fired.value == [start + .nanoseconds(1_234_567), start + .milliseconds(7)])
        }
    }

    @Test("a trace keeps only its most recent events")
    func boundedTrace() {
        onFreshThread {
            let loop = EVRunLoop(clock: EVVirtualClock())
            let trace = EVRunLoop.Trace(capacity: 5)
            loop.trace = trace
            loop.add(EVTimer(interval: .milliseconds(1), repeats: true, label: "t") { _ in }, forMode: .default)
            loop.advance(by: .milliseconds(100))
            #expect(trace.events.count == 5)
            #expect(trace.droppedCount > 500)
            #expect(trace.lines.last == "return(timedOut)")
        }
    }
}

/// Emits the last input `delay` after inputs stop, with one restarted timer on a loop.
final class TimerDebouncer: @unchecked Sendable {
    // Safe: used only on the loop's thread (the test's thread, which owns the loop).
    private let loop: EVRunLoop
    private let delay: Duration
    private var timer: EVTimer?
    private var latest = ""
    private(set) var fired: [(value: String, at: EVRunLoop.Instant)] = []

    init(loop: EVRunLoop, delay: Duration) {
        self.loop = loop
        self.delay = delay
    }

    func input(_ value: String) {
        latest = value
        if let timer, timer.isValid {
            timer.restart(after: delay)
            return
        }
        let timer = EVTimer(interval: delay, repeats: false) { [unowned self] _ in
            fired.append((latest, loop.now))
        }
        self.timer = timer
        loop.add(timer, forMode: .default)
    }
}
