import Foundation
import ExampleSupport
import RunLoopKit

/// One redraw strategy running on a run loop: it keeps the todo list current, hands every
/// redraw to a drawing closure, and measures the timer-driven redraws.
///
/// ```swift
/// let session = CountdownSession(strategy: .aligned, list: list, loop: loop) { frame in show(frame) }
/// session.start()
/// loop.run(mode: .default, for: .seconds(30))
/// print(session.stop().line)
/// ```
public final class CountdownSession {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    /// The strategy this session runs.
    public let strategy: Strategy
    /// The table, as of the last redraw.
    public private(set) var list: TodoList
    /// The measurements so far.
    public private(set) var tracker = SecondTracker()
    /// For every timer-driven redraw: seconds since ``start()``, the loop's wakeups since then,
    /// and the lag of the second it showed if it was a new one (``SecondTracker/lags``).
    public private(set) var timeline: [(seconds: Double, wakeups: Int, lag: Double?)] = []
    private let loop: EVRunLoop
    private let draw: (CountdownFrame) -> Void
    private var timer: EVTimer?
    /// The "now" the last redraw computed its rows for.
    private var shownNow: Date
    /// When the poll strategy last redrew.
    private var lastPollRedraw: Date?
    private var startInstant: EVRunLoop.Instant
    private var startStatistics: EVRunLoop.Statistics

    /// Creates a session; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - strategy: when to redraw.
    ///   - list: the table to count down.
    ///   - loop: the loop whose default mode the redraw timer joins; use it on its thread only.
    ///   - draw: called with every frame to show, timer-driven or after a key.
    public init(
        strategy: Strategy, list: TodoList, loop: EVRunLoop, draw: @escaping (CountdownFrame) -> Void
    ) {
        self.strategy = strategy
        self.list = list
        self.loop = loop
        self.draw = draw
        shownNow = loop.wallNow
        startInstant = loop.now
        startStatistics = loop.statistics
    }

    /// Draws the table once and adds the strategy's timer to the loop's default mode.
    // snippet: todo-countdown-timers
    public func start() {
        startInstant = loop.now
        startStatistics = loop.statistics
        let now = loop.wallNow
        lastPollRedraw = now
        redraw(now: now)
        let timer = switch strategy {
        case .poll:
            EVTimer(interval: 0.1, repeats: true, label: "poll 0.1 s",
                block: EVRunLoop.isolated { [weak self] _ in self?.pollTick() })
        case .aligned:
            EVTimer(alignedTo: 1, label: "aligned 1 s", block: EVRunLoop.isolated { [weak self] _ in
                guard let self else { return }
                redraw(now: loop.wakeDate ?? loop.wallNow)
            })
        }
        self.timer = timer
        loop.add(timer, forMode: .default)
    }

    /// The write-up's tick: capture "now" once, redraw only if a second has passed since
    /// the last redraw.
    private func pollTick() {
        let now = loop.wallNow
        if let last = lastPollRedraw, now.timeIntervalSince(last) < 1 { return }
        lastPollRedraw = now
        redraw(now: now)
    }

    /// A timer-driven full redraw: every row computed from the same `now`, measured at the
    /// moment the frame goes to the screen.
    private func redraw(now: Date) {
        shownNow = now
        list.removeDone(at: now)
        let lagsBefore = tracker.lags.count
        tracker.record(shown: now, drawnAt: loop.wallNow)
        timeline.append((Double(loop.now.nanoseconds - startInstant.nanoseconds) / 1e9, loop.statistics.wakeups - startStatistics.wakeups,
                         tracker.lags.count > lagsBefore ? tracker.lags.last : nil))
        draw(frame)
    }
    // end

    /// Moves the selection and redraws the same moment again (not a measured redraw).
    public func moveSelection(by delta: Int) {
        list.moveSelection(by: delta)
        draw(frame)
    }

    /// The frame for the current state.
    public var frame: CountdownFrame {
        CountdownFrame(strategy: strategy, now: shownNow, rows: list.rows(at: shownNow), tracker: tracker)
    }

    /// Invalidates the timer and returns what the run measured.
    public func stop() -> StrategyReport {
        timer?.invalidate()
        timer = nil
        let seconds = Double(loop.now.nanoseconds - startInstant.nanoseconds) / 1e9
        let wakeups = loop.statistics.wakeups - startStatistics.wakeups
        var lagsMs = Samples()
        for lag in tracker.lags { lagsMs.append(lag * 1000) }
        return StrategyReport(
            strategy: strategy, durationSeconds: rounded(seconds, 3), redraws: tracker.redraws,
            skippedSeconds: tracker.skipped, repeatedSeconds: tracker.repeated, wakeups: wakeups,
            wakeupsPerSecond: rounded(seconds > 0 ? Double(wakeups) / seconds : 0, 3),
            timerFires: loop.statistics.timerFires - startStatistics.timerFires,
            lagMedianMs: lagsMs.count == 0 ? nil : rounded(lagsMs.median, 3),
            lagP99Ms: lagsMs.count == 0 ? nil : rounded(lagsMs.p99, 3))
    }
}
