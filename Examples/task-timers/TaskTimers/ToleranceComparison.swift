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
    public func run(on loop: EVRunLoop, tolerance: Double, for duration: Duration) -> Run {
        let recorder = LatenessRecorder()
        let interval = Duration.seconds(1)
        let origin = loop.now
        var made: [EVTimer] = []
        for index in 0..<timers {
            let phase = Duration.seconds(1) * Double(index + 1) / Double(timers)
            let first = origin + phase
            let timer = EVTimer(fireAt: loop.wallNow.addingTimeInterval(seconds(phase)), interval: 1,
                                repeats: true, tolerance: tolerance, label: "task \(index + 1)") { _ in
                recorder.record(now: loop.now, first: first, interval: interval)
            }
            made.append(timer)
            loop.add(timer, forMode: Self.mode)
        }
        let before = loop.statistics
        let start = loop.now
        loop.run(mode: Self.mode, for: duration)
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

/// How late timer callouts ran against their schedule `first + k * interval`.
final class LatenessRecorder: @unchecked Sendable {
    // Safe to share: touched only on the loop thread, by timer callouts.
    private(set) var fires = 0
    private(set) var earliest = 0.0
    private(set) var latest = 0.0

    /// Records a callout at `now` of a timer scheduled at `first + k * interval`, measured
    /// from the nearest scheduled time (so an early callout shows as negative). The fire
    /// dates were given as `Date`s, which the loop converts to its clock with sub-microsecond
    /// rounding; the report rounds to the microsecond.
    func record(now: EVRunLoop.Instant, first: EVRunLoop.Instant, interval: Duration) {
        let sinceFirst = now - first
        let nearest = (sinceFirst / interval).rounded()
        let late = seconds(sinceFirst) - nearest * seconds(interval)
        earliest = fires == 0 ? late : min(earliest, late)
        latest = fires == 0 ? late : max(latest, late)
        fires += 1
    }
}

/// The tolerance comparison's result: the same timers without and with tolerance.
public struct ToleranceReport: Codable, Hashable, Sendable {
    /// How many timers.
    public var timers: Int
    /// The run without tolerance.
    public var without: ToleranceComparison.Run
    /// The run with tolerance; nil if the user quit before it.
    public var with: ToleranceComparison.Run?

    /// Creates a report; `with` is nil when the second run did not happen (the user quit).
    public init(timers: Int, without: ToleranceComparison.Run, with: ToleranceComparison.Run?) {
        self.timers = timers
        self.without = without
        self.with = with
    }

    /// The human-readable lines.
    public var lines: [String] {
        func line(_ run: ToleranceComparison.Run) -> String {
            String(format: "  tolerance %.2f s: %.2f s, %d wakeups = %.1f/s, %d fires, late %.2f...%.2f ms",
                   run.tolerance, run.seconds, run.wakeups, run.wakeupsPerSecond, run.fires, run.earliestMs,
                   run.latestMs)
        }
        var lines = ["tolerance comparison: \(timers) tasks, each with its own 1 s timer", line(without)]
        if let with {
            lines.append(line(with))
            if with.wakeupsPerSecond > 0 {
                lines.append(String(format: "  tolerance saves %.0f%% of the wakeups (%.1fx fewer)",
                                    100 * (1 - with.wakeupsPerSecond / without.wakeupsPerSecond),
                                    without.wakeupsPerSecond / with.wakeupsPerSecond))
            }
        }
        return lines
    }
}
