import Foundation
import Synchronization
import RunLoopKit
import Testing
import TodoCountdown

@Suite("CountdownSession under virtual time")
struct CountdownSessionTests {
    /// Runs `strategy` for `seconds` of virtual time, starting 0.37 s into a wall-clock
    /// second; with `latency`, each wake is followed by that much simulated work.
    func run(
        _ strategy: Strategy, seconds: Int64, latency: (@Sendable () -> Duration)? = nil
    ) -> (report: StrategyReport, frames: [CountdownFrame]) {
        let clock = EVVirtualClock(wallStart: Date(timeIntervalSince1970: 1_767_225_600.37))
        let loop = EVRunLoop(clock: clock)
        if let latency {
            loop.add(EVObserver(activities: .afterWaiting) { _, _ in clock.advance(by: latency()) },
                     forMode: .default)
        }
        var frames: [CountdownFrame] = []
        let list = TodoList.sample(count: 5, start: loop.wallNow, removesDone: false)
        let session = CountdownSession(strategy: strategy, list: list, loop: loop) { frames.append($0) }
        session.start()
        loop.run(mode: .default, for: .seconds(seconds))
        return (session.stop(), frames)
    }

    @Test("aligned: no second skipped or repeated over 30 s, at a tenth of poll's wakeups")
    func alignedVersusPoll() {
        let aligned = run(.aligned, seconds: 30).report
        let poll = run(.poll, seconds: 30).report
        #expect(aligned.skippedSeconds == 0)
        #expect(aligned.repeatedSeconds == 0)
        #expect(aligned.redraws == 31)  // the first draw, then every whole second
        #expect(aligned.lagP99Ms == 0)  // virtual time: the wake is exactly on the second
        #expect((29...31).contains(aligned.wakeups))
        #expect((299...301).contains(poll.wakeups))
        #expect(aligned.wakeupsPerSecond <= poll.wakeupsPerSecond / 9)
        // Poll redraws in the phase it started in: about 0.37 s after each second.
        #expect((poll.lagMedianMs ?? 0) >= 300)
    }

    @Test("with wake latency, poll's throttle slips a second while aligned skips nothing")
    func latencyMakesPollSkip() {
        let jitter = Jitter()
        let poll = run(.poll, seconds: 60, latency: jitter.next).report
        let aligned = run(.aligned, seconds: 60, latency: jitter.next).report
        #expect(poll.skippedSeconds >= 1)
        #expect(aligned.skippedSeconds == 0)
        #expect(aligned.repeatedSeconds == 0)
        #expect((aligned.lagP99Ms ?? .infinity) < 2)
    }

    @Test("every row of a redraw is computed from the same now, and counts down by one per redraw")
    func rowsAgreeAndCountDown() {
        let frames = run(.aligned, seconds: 5).frames
        // Item j is due 11 + 10 j seconds after the first draw; draw i happens i seconds later.
        let expected = (0..<6).map { draw in (0..<5).map { item -> Int64? in Int64(11 + 10 * item - draw) } }
        #expect(frames.map { $0.rows.map(\.secondsRemaining) } == expected)
    }
}

/// Deterministic pseudo-random wake latencies in [0, 2) ms (a linear congruential generator).
final class Jitter: Sendable {
    private let state = Mutex<UInt64>(42)

    func next() -> Duration {
        let value = state.withLock { state in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        return .microseconds(Int64(value % 2000))
    }
}
