import Foundation
import RunLoopKit

/// Many tasks, each with its own 1 s refresh timer, their fire times spread evenly over the
/// second: run once without tolerance and once with, to count the wakeups tolerance saves.
///
/// Each run uses its own mode, ``mode``, so that the loop's other timers and sources stay
/// out of the count (add a SIGINT source to it to stay interruptible).
public struct ToleranceComparison: Sendable {
    /// The mode the comparison runs in.
    public static let mode = EVRunLoop.Mode("tolerance-comparison")

    /// How many timers (one per task).
    public let timers: Int
    /// The tolerance of the second run, in seconds.
    public let tolerance: Double

    /// Creates a comparison of `timers` timers with `tolerance` versus none.
    public init(timers: Int = 200, tolerance: Double = 0.1) {
        self.timers = timers
        self.tolerance = tolerance
    }

    /// What one run measured.
    public struct Run: Codable, Hashable, Sendable {
        /// The timers' tolerance, in seconds.
        public var tolerance: Double
        /// Seconds the run lasted.
        public var seconds: Double
        /// Loop wakeups.
        public var wakeups: Int
        /// ``wakeups`` per second of ``seconds``.
        public var wakeupsPerSecond: Double
        /// Timer callouts.
        public var fires: Int
        /// The earliest a callout ran relative to its scheduled time, in ms to the
        /// microsecond (never negative: a timer never fires early).
        public var earliestMs: Double
        /// The latest a callout ran relative to its scheduled time, in ms (at most the
        /// tolerance plus the wake's own latency).
        public var latestMs: Double
    }

    /// Runs the timers with `tolerance` in ``mode`` of `loop` for `duration` and measures.
    ///
    /// - Parameters:
    ///   - loop: the loop, on its thread.
    ///   - tolerance: the timers' tolerance, in seconds.
    ///   - duration: how long to run.
    ///   - onWake: called after each of the run's wakes with the seconds since the run started
    ///     (for `--plot`).
    /// - Returns: what the run measured.
    public func run(
        on loop: EVRunLoop, tolerance: Double, for duration: Duration, onWake: ((Double) -> Void)? = nil
    ) -> Run {
        let recorder = LatenessRecorder()
        let interval = Duration.seconds(1)
        let origin = loop.now
        var made: [EVTimer] = []
        for index in 0..<timers {
            // Spread over the second, half a step from its ends: no timer falls due right at the
            // run's deadline, where a microsecond decides whether it counts.
            let phase = Duration.seconds(1) * (Double(index) + 0.5) / Double(timers)
            let first = origin + phase
            let timer = EVTimer(fireAt: loop.wallNow.addingTimeInterval(seconds(phase)), interval: 1,
                                repeats: true, tolerance: tolerance, label: "task \(index + 1)",
                                    block: EVRunLoop.isolated { _ in
                recorder.record(now: loop.now, first: first, interval: interval)
            })
            made.append(timer)
            loop.add(timer, forMode: Self.mode)
        }
        let before = loop.statistics
        let start = loop.now
        let wakes = onWake.map { onWake in
            EVObserver(activities: .afterWaiting, label: "plot") { _, _ in onWake(seconds(loop.now - start)) }
        }
        if let wakes { loop.add(wakes, forMode: Self.mode) }
        loop.run(mode: Self.mode, for: duration)
        wakes?.invalidate()
        let elapsed = seconds(loop.now - start)
        for timer in made { timer.invalidate() }
        let wakeups = loop.statistics.wakeups - before.wakeups
        return Run(
            tolerance: tolerance, seconds: roundedMillis(elapsed), wakeups: wakeups,
            wakeupsPerSecond: roundedMillis(elapsed > 0 ? Double(wakeups) / elapsed : 0),
            fires: recorder.fires, earliestMs: roundedMillis(recorder.earliest * 1000) + 0,  // + 0 turns -0 into 0
            latestMs: roundedMillis(recorder.latest * 1000) + 0)
    }
}
