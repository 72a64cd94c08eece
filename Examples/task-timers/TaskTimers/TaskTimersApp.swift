import ExampleSupport
import Foundation
import RunLoopKit

/// The task list app on a run loop: a 1 s refresh timer with 0.1 s tolerance, scrolling in
/// a tracking mode, the background, and an "all done" animation on a display link.
///
/// ```swift
/// let app = TaskTimersApp(loop: loop, refreshMode: .common) { state in show(state) }
/// app.start()
/// app.perform(.add)
/// loop.run(mode: .default, for: .seconds(10))
/// print(app.finish().lines)
/// ```
public final class TaskTimersApp {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    /// The mode the loop runs while the user scrolls (UIKit's `UITrackingRunLoopMode`).
    public static let tracking = EVRunLoop.Mode("tracking")
    /// The refresh timer's interval, in seconds.
    public static let refreshInterval = 1.0
    /// The refresh timer's tolerance, in seconds.
    public static let refreshTolerance = 0.1

    /// The refresh timer's mode.
    public let refreshMode: RefreshMode
    /// How long one scroll keeps the loop in the tracking mode.
    public let scrollDuration: Duration
    /// The tasks.
    public private(set) var board = TaskBoard()
    /// Whether the app is in the background.
    public private(set) var isBackground = false
    /// Whether the user quit.
    public private(set) var quitRequested = false

    private let loop: EVRunLoop
    private let draw: (TaskScreenState) -> Void
    private let log: (String) -> Void
    private var report: SessionReport
    private var refreshTimer: EVTimer?
    private var refreshCreated: EVRunLoop.Instant?
    private var lastRefresh: EVRunLoop.Instant?
    private var celebration: Celebration?
    private var rows: [TaskRow] = []
    private var rowsAt: Date
    private var scrollProgress: Double?
    private var ticksThisScroll = 0
    private var backgroundStart: EVRunLoop.Instant?
    private var startInstant: EVRunLoop.Instant
    private var startStatistics: EVRunLoop.Statistics

    /// Creates the app; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - loop: the loop to run on; use the app on its thread only.
    ///   - refreshMode: where the refresh timer goes.
    ///   - scrollDuration: how long a scroll runs the tracking mode (default 2 s).
    ///   - draw: called with the screen's state whenever it changes.
    ///   - log: called with one line per event (ticks, actions, animation).
    public init(
        loop: EVRunLoop, refreshMode: RefreshMode, scrollDuration: Duration = .seconds(2),
        draw: @escaping (TaskScreenState) -> Void = { _ in }, log: @escaping (String) -> Void = { _ in }
    ) {
        self.loop = loop
        self.refreshMode = refreshMode
        self.scrollDuration = scrollDuration
        self.draw = draw
        self.log = log
        report = SessionReport(refreshMode: refreshMode)
        rowsAt = loop.wallNow
        startInstant = loop.now
        startStatistics = loop.statistics
    }

    /// Makes the tracking mode common (so that common-mode items — keys, signals, the
    /// animation and a `.common` refresh timer — work while scrolling) and draws.
    public func start() {
        loop.addCommonMode(Self.tracking)
        startInstant = loop.now
        startStatistics = loop.statistics
        reload()
    }

    /// Does what the user asked. A scroll returns when the scroll is over.
    public func perform(_ action: TaskAction) {
        switch action {
        case .add: add()
        case .complete: complete()
        case .up, .down:
            board.moveSelection(by: action == .up ? -1 : 1)
            reload()
        case .scroll: scroll()
        case .toggleBackground: toggleBackground()
        case .quit:
            say("quit")
            quitRequested = true
            loop.stop()
        case .wait: break
        }
    }

    // MARK: Tasks

    private func add() {
        if let celebration, celebration.isRunning {
            celebration.stop()
            finishCelebration(celebration)
        }
        board.add(at: loop.wallNow)
        report.tasksAdded += 1
        say("add: \(board.tasks.last?.title ?? "")")
        ensureRefreshTimer()
        reload()
    }

    private func complete() {
        guard board.completeSelected(at: loop.wallNow) else { return }
        report.tasksDone += 1
        say("done: \(board.tasks.filter(\.isDone).count) of \(board.tasks.count)")
        if !board.hasOpenTasks {
            dropRefreshTimer()
            say("all done: refresh timer invalidated, animation starts")
            startCelebration()
        }
        reload()
    }

    // MARK: Refresh timer

    // snippet: task-timers-refresh
    private func ensureRefreshTimer() {
        guard refreshTimer == nil, board.hasOpenTasks, !isBackground else { return }
        let timer = EVTimer(interval: Self.refreshInterval, repeats: true, tolerance: Self.refreshTolerance,
                            label: "refresh", block: EVRunLoop.isolated { [weak self] _ in self?.tick() })
        refreshTimer = timer
        refreshCreated = loop.now
        lastRefresh = loop.now
        report.refreshTimersCreated += 1
        loop.add(timer, forMode: refreshMode.mode)
    }

    private func dropRefreshTimer() {
        refreshTimer?.invalidate()
        refreshTimer = nil
        refreshCreated = nil
        lastRefresh = nil
    }
    // end

    private func tick() {
        let now = loop.now
        report.refreshTicks += 1
        if scrollProgress != nil {
            report.ticksDuringTracking += 1
            ticksThisScroll += 1
        }
        if let lastRefresh {
            report.longestRefreshGapSeconds = max(report.longestRefreshGapSeconds, seconds(now - lastRefresh))
        }
        lastRefresh = now
        board.countTick()
        reload()
        let ages = rows.compactMap { $0.ageSeconds.map { "\($0) s" } }.joined(separator: ", ")
        say("tick \(report.refreshTicks) in \(loop.currentMode.map(Self.name) ?? "-"): \(ages)")
    }

    // MARK: Scrolling

    /// Runs the loop in the tracking mode for ``scrollDuration``, as UIKit does while a
    /// finger drags a list; a scroll timer in that mode moves the scroll indicator.
    // snippet: task-timers-scroll
    private func scroll() {
        guard scrollProgress == nil else { return }
        report.scrolls += 1
        let start = loop.now
        let timerBefore = refreshTimer
        ticksThisScroll = 0
        scrollProgress = 0
        say("scroll: tracking mode for \(seconds(scrollDuration)) s")
        let scroller = EVTimer(interval: 0.1, repeats: true, label: "scroll",
            block: EVRunLoop.isolated { [weak self] _ in
            guard let self else { return }
            scrollProgress = min(1, (loop.now - start) / scrollDuration)
            redraw()
        })
        loop.add(scroller, forMode: Self.tracking)
        redraw()
        loop.run(mode: Self.tracking, for: scrollDuration)
        scroller.invalidate()
        // end
        scrollProgress = nil
        let end = loop.now
        report.trackingSeconds += seconds(end - start)
        if let created = refreshCreated, let timer = refreshTimer, timer === timerBefore {
            let interval = Duration.seconds(Self.refreshInterval)
            let scheduled = Int(((end - created) / interval).rounded(.down))
                - Int(((start - created) / interval).rounded(.down))
            let missed = max(0, scheduled - ticksThisScroll)
            report.ticksMissedDuringTracking += missed
            say("scroll over: \(ticksThisScroll) ticks fired while tracking, \(missed) missed")
        }
        if quitRequested { loop.stop() }
        redraw()
    }

    // MARK: Background

    private func toggleBackground() {
        if isBackground {
            isBackground = false
            if let backgroundStart { report.backgroundSeconds += seconds(loop.now - backgroundStart) }
            backgroundStart = nil
            celebration?.isPaused = false
            ensureRefreshTimer()
            reload()
            say("foreground: rows recomputed from dates at once")
        } else {
            isBackground = true
            backgroundStart = loop.now
            dropRefreshTimer()
            celebration?.isPaused = true
            say("background: timers stopped")
            redraw()
        }
    }

    // MARK: Animation

    private func startCelebration() {
        report.animations += 1
        celebration = Celebration(loop: loop, onFrame: { [weak self] _ in self?.redraw() },
                                  onFinish: { [weak self] in self?.finishCelebration($0) })
    }

    private func finishCelebration(_ finished: Celebration) {
        report.framesDrawn += finished.framesDrawn
        report.framesDropped += finished.framesDropped
        say("animation over: \(counted(finished.framesDrawn, "frame")) drawn, \(finished.framesDropped) dropped")
        if celebration === finished { celebration = nil }
        redraw()
    }

    // MARK: Drawing

    /// Recomputes every row from dates, then draws.
    private func reload() {
        rowsAt = loop.wallNow
        rows = board.rows(at: rowsAt)
        redraw()
    }

    /// Draws the rows of the last reload with the current status.
    private func redraw() {
        draw(TaskScreenState(
            rows: rows, rowsAt: rowsAt, refreshMode: refreshMode, hasRefreshTimer: refreshTimer != nil,
            scrollProgress: scrollProgress, isBackground: isBackground,
            celebrationBar: celebration.flatMap { $0.isRunning ? $0.bar(width: 30) : nil },
            ticks: report.refreshTicks, ticksMissedDuringTracking: report.ticksMissedDuringTracking,
            framesDrawn: report.framesDrawn + (celebration?.framesDrawn ?? 0),
            framesDropped: report.framesDropped))
    }

    private func say(_ line: String) {
        log(String(format: "[%6.2f s] ", seconds(loop.now - startInstant)) + line)
    }

    // MARK: Summary

    /// Ends the animation and the refresh timer and returns what the session measured.
    public func finish() -> SessionReport {
        if let celebration, celebration.isRunning {
            celebration.stop()
            finishCelebration(celebration)
        }
        if isBackground, let backgroundStart { report.backgroundSeconds += seconds(loop.now - backgroundStart) }
        backgroundStart = nil
        dropRefreshTimer()
        var result = report
        result.durationSeconds = seconds(loop.now - startInstant)
        result.wakeups = loop.statistics.wakeups - startStatistics.wakeups
        result.wakeupsPerSecond = result.durationSeconds > 0 ? Double(result.wakeups) / result.durationSeconds : 0
        result.tickCountingLagSeconds = board.tickCountingLag(at: loop.wallNow)
        return result.rounded()
    }

    private static func name(_ mode: EVRunLoop.Mode) -> String {
        mode == .default ? "default" : mode.rawValue
    }
}
