import ExampleSupport
import Foundation
import Glibc
import RunLoopKit

/// A stopwatch on a run loop, with the write-up's counting approach measured next to it.
///
/// A 100 Hz ``EVFrameTimer`` redraws while the stopwatch runs and is paused while it is
/// stopped, so a stopped stopwatch costs no wakeups. On every frame the computed time
/// (from the monotonic start instant) is shown, and the seed's counter adds 0.01 s; at the
/// end both are compared with the wall-clock time the stopwatch really ran.
///
/// All readings go through the loop (`now`, `wallNow`) and slow work through a `work`
/// closure, so tests drive a session on an `EVVirtualClock` loop.
public final class StopwatchSession {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    /// Spends the given time, simulating slow work on the loop's thread.
    public typealias Work = @Sendable (Duration) -> Void

    /// What the screen is told about.
    public enum Event: Sendable, Equatable {
        /// The session started without timing: the display shows its first reading.
        case ready
        /// A frame was drawn.
        case frame
        /// An action was performed.
        case action(Action)
    }

    /// The run loop everything runs on.
    public let loop: EVRunLoop
    /// What this session does.
    public let configuration: StopwatchConfiguration
    /// The display format.
    public let format: ElapsedFormat
    private let work: Work
    /// Called on the loop thread after each frame and action, for the live display.
    public var onEvent: ((Event, StopwatchSession) -> Void)?

    /// The stopwatch (computed approach).
    public private(set) var state = StopwatchState()
    /// The seed's stopwatch: seconds added, 0.01 per frame while running.
    public private(set) var counted = 0.0
    /// The time shown by the last frame (computed approach).
    public private(set) var shown: Duration = .zero
    /// Every tenth running frame: the wall-clock seconds the stopwatch has run, the computed
    /// and counted times minus those seconds (their drift), and the frames dropped so far.
    public private(set) var driftTimeline: [(seconds: Double, computed: Double, counted: Double, dropped: Int)] = []

    private var link: EVFrameTimer?
    private var scriptTimers: [EVTimer] = []
    private var sessionStart: EVRunLoop.Instant?
    private var startWakeups = 0
    private var startCPU = 0.0
    /// Wall-clock time the stopwatch ran since the last reset: the independent reference
    /// the drift of both approaches is measured against.
    private var wallRunning = 0.0
    /// Wall-clock time the stopwatch ran in the whole session, for the update rate.
    private var wallRunningTotal = 0.0
    private var wallStartedAt: Date?
    private var framesWhileRunning = 0
    private var droppedWhileRunning = 0
    private var stalls = 0
    private var lastStalledSecond: Int64 = 0

    /// Creates a session; nothing runs until ``start()``.
    ///
    /// - Parameter work: spends the stall time; sleeps by default.
    public init(loop: EVRunLoop, configuration: StopwatchConfiguration, work: @escaping Work = StopwatchSession.sleep) {
        self.loop = loop
        self.configuration = configuration
        self.format = ElapsedFormat(locale: configuration.locale)
        self.work = work
    }

    /// Sleeps the calling thread for `duration`: the default slow work.
    public static let sleep: Work = { duration in ThreadSleep.sleep(for: duration) }

    /// The text the display shows now.
    public var display: String { format.string(shown) }

    /// Adds the frame timer (paused) and the scripted actions to the loop's default mode,
    /// and starts timing if configured to. Loop thread only.
    // snippet: stopwatch-frame-timer
    public func start() {
        sessionStart = loop.now
        startWakeups = loop.statistics.wakeups
        startCPU = Self.cpuSeconds()
        let link = EVFrameTimer(framesPerSecond: configuration.framesPerSecond, label: "stopwatch",
            block: EVRunLoop.isolated { [weak self] link in
            guard let self else { return }
            frame(link)
        })
        link.isPaused = true
        loop.add(link, forMode: .default)
        self.link = link
        for scheduled in configuration.script {
            let timer = EVTimer(interval: scheduled.delay, repeats: false, label: scheduled.action.rawValue,
                block: EVRunLoop.isolated { [weak self] _ in
                guard let self else { return }
                perform(scheduled.action)
            })
            scriptTimers.append(timer)
            loop.add(timer, forMode: .default)
        }
        // The display shows 00:00.00 at once, not only after the first key.
        if configuration.startsAtOnce { perform(.start) } else { onEvent?(.ready, self) }
    }
    // end

    /// Performs `action` now. Loop thread only.
    public func perform(_ action: Action) {
        let now = loop.now
        switch action {
        case .start:
            guard !state.isRunning else { return }
            state.start(at: now)
            wallStartedAt = loop.wallNow
            link?.isPaused = false
        case .stop:
            guard state.isRunning else { return }
            state.stop(at: now)
            if let wallStartedAt {
                let period = loop.wallNow.timeIntervalSince(wallStartedAt)
                wallRunning += period
                wallRunningTotal += period
            }
            wallStartedAt = nil
            link?.isPaused = true
        case .toggle:
            perform(state.isRunning ? .stop : .start)
            return
        case .lap:
            state.lap(at: now)
        case .reset:
            perform(.stop)
            state.reset()
            counted = 0
            wallRunning = 0
            lastStalledSecond = 0
        case .quit:
            loop.stop()
        }
        shown = state.elapsed(at: now)
        onEvent?(.action(action), self)
    }

    /// One display frame: the computed time at the frame's own timestamp (so consecutive
    /// frames differ by exactly one hundredth), the seed's counter, and the simulated stall.
    private func frame(_ link: EVFrameTimer) {
        guard state.isRunning else { return }
        shown = state.elapsed(at: link.timestamp)
        counted += 0.01
        framesWhileRunning += 1
        if framesWhileRunning % 10 == 1, let wallStartedAt {
            let ran = wallRunning + loop.wallNow.timeIntervalSince(wallStartedAt)
            driftTimeline.append((ran, shown.timeInterval - ran, counted - ran, link.droppedFrames))
        }
        onEvent?(.frame, self)
        stallOncePerSecond()
    }

    /// Spends ``StopwatchConfiguration/stallMilliseconds`` on the first frame of each
    /// running second after the first.
    private func stallOncePerSecond() {
        guard configuration.stallMilliseconds > 0 else { return }
        let second = shown.components.seconds
        guard second > lastStalledSecond else { return }
        lastStalledSecond = second
        stalls += 1
        work(.nanoseconds(Int64((configuration.stallMilliseconds * 1e6).rounded())))
    }

    /// Stops timing and every timer, and returns what was measured. Loop thread only.
    public func finish() -> StopwatchSummary {
        let dropped = link?.droppedFrames ?? 0
        perform(.stop)
        // The examples' one ownership idiom: the session keeps its timers and invalidates them
        // when it stops; their callouts hold the session weakly.
        link?.invalidate()
        link = nil
        for timer in scriptTimers { timer.invalidate() }
        scriptTimers.removeAll()
        let elapsed = sessionStart.map { (loop.now - $0).timeInterval } ?? 0
        let computed = state.accumulated.timeInterval
        return StopwatchSummary(
            duration: elapsed,
            runningSeconds: wallRunning,
            shown: format.string(state.accumulated),
            computedSeconds: computed,
            countedSeconds: counted,
            computedDriftSeconds: computed - wallRunning,
            countingDriftSeconds: counted - wallRunning,
            frames: framesWhileRunning,
            droppedFrames: dropped,
            updatesPerSecond: wallRunningTotal > 0 ? Double(framesWhileRunning) / wallRunningTotal : 0,
            wakeupsPerSecond: elapsed > 0 ? Double(loop.statistics.wakeups - startWakeups) / elapsed : 0,
            cpuSeconds: Self.cpuSeconds() - startCPU,
            stalls: stalls,
            stallMilliseconds: configuration.stallMilliseconds,
            laps: state.laps.map(format.string),
            decimalSeparator: format.decimalSeparator)
    }

    /// User plus system CPU time of this process so far, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
