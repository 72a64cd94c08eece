import ExampleSupport
import Foundation
import RunLoopKit

/// The clock itself: the strategies' timers on one run loop, and what each of them drew.
///
/// ```swift
/// let session = ClockSession(loop: .current, configuration: .init(compare: true, naiveStartDelay: 0.4))
/// session.start()
/// EVRunLoop.current.run(mode: .default, for: .seconds(10))
/// let summary = session.finish()
/// ```
///
/// Every reading goes through the loop (`now`, `wallNow`), and publishing is simulated by
/// a `work` closure, so tests drive a session on an `EVVirtualClock` loop.
public final class ClockSession {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    /// Spends the given time, simulating the work of publishing a tick.
    public typealias Work = @Sendable (Duration) -> Void

    /// The run loop the timers run on.
    public let loop: EVRunLoop
    /// What this session measures.
    public let configuration: ClockConfiguration
    private let work: Work
    /// Called on the loop thread for every display update, for the live display.
    public var onUpdate: ((DisplayUpdate, ClockSession) -> Void)?

    private var timers: [EVTimer] = []
    private var leadTimer: EVTimer?
    /// The lead the lead timer was created with, in seconds.
    private var armedLead: Double = 0
    private var estimator = LeadEstimator()
    private var lastPolledSecond: Int64?
    private var started: EVRunLoop.Instant?
    private var startWakeups = 0

    /// Every display update so far, per strategy.
    public private(set) var updates: [Strategy: [DisplayUpdate]] = [:]
    /// Timer callouts so far, per strategy (each is a wakeup when the strategy runs alone).
    public private(set) var fires: [Strategy: Int] = [:]
    /// Sub-second phases of the aligned timer's ticks, for the running mean and spread.
    public private(set) var alignedTickPhases = Samples()

    /// Creates a session; nothing runs until ``start()``.
    ///
    /// - Parameter work: spends the publish cost; sleeps by default.
    public init(loop: EVRunLoop, configuration: ClockConfiguration, work: @escaping Work = ClockSession.sleep) {
        self.loop = loop
        self.configuration = configuration
        self.work = work
    }

    /// Sleeps the calling thread for `duration`: the default publish work.
    public static let sleep: Work = { duration in ThreadSleep.sleep(for: duration) }

    /// Adds the strategies' timers to the loop's default mode. Loop thread only.
    // snippet: aligned-clock-timers
    public func start() {
        started = loop.now
        startWakeups = loop.statistics.wakeups
        for strategy in configuration.strategies {
            switch strategy {
            case .naive: startNaive()
            case .polling: add(EVTimer(interval: 0.1, repeats: true, label: "polling",
                block: EVRunLoop.isolated { [weak self] _ in self?.poll() }))
            case .aligned:
                add(EVTimer(alignedTo: 1, label: "aligned",
                    block: EVRunLoop.isolated { [weak self] timer in self?.alignedTick(timer, strategy: .aligned) }))
            case .alignedWithLead: startLead()
            }
        }
    }

    /// Stops every timer and returns what was measured. Loop thread only.
    public func finish() -> ClockSummary {
        // The examples' one ownership idiom: the session keeps its timers and invalidates them
        // when it stops; their callouts hold the session weakly.
        for timer in timers { timer.invalidate() }
        leadTimer?.invalidate()
        timers.removeAll()
        leadTimer = nil
        let elapsed = started.map { (loop.now - $0).timeInterval } ?? 0
        let rows = configuration.strategies.map { strategy in
            StrategyReport(strategy: strategy, updates: updates[strategy] ?? [],
                           fires: fires[strategy] ?? 0, elapsed: elapsed)
        }
        let wakeups = loop.statistics.wakeups - startWakeups
        return ClockSummary(
            duration: elapsed, strategies: rows,
            loopWakeupsPerSecond: elapsed > 0 ? Double(wakeups) / elapsed : 0,
            publishCost: configuration.publishCost,
            lead: configuration.lead == .none ? nil : armedLead,
            alignedTickPhaseMean: alignedTickPhases.mean, alignedTickPhaseSpread: alignedTickPhases.spread)
    }
    // end

    private func add(_ timer: EVTimer) {
        timers.append(timer)
        loop.add(timer, forMode: .default)
    }

    // MARK: Strategies

    /// Waits the configured arbitrary delay, then starts a plain 1 s timer.
    private func startNaive() {
        add(EVTimer(interval: configuration.naiveStartDelay, repeats: false, label: "naive start",
            block: EVRunLoop.isolated { [weak self] _ in
            guard let self else { return }
            add(EVTimer(interval: 1, repeats: true, label: "naive", block: EVRunLoop.isolated { [weak self] _ in
                guard let self else { return }
                count(.naive)
                let tick = loop.wallNow
                record(DisplayUpdate(strategy: .naive, shownSecond: Self.second(of: tick), tick: tick, appeared: tick))
            }))
        }))
    }

    /// Redraws when the second read from the wall clock differs from the one shown.
    private func poll() {
        count(.polling)
        let tick = loop.wallNow
        let second = Self.second(of: tick)
        guard let last = lastPolledSecond else {
            lastPolledSecond = second  // the first poll only learns the second already shown
            return
        }
        guard second != last else { return }
        lastPolledSecond = second
        record(DisplayUpdate(strategy: .polling, shownSecond: second, tick: tick, appeared: tick))
    }

    /// A tick of an aligned timer: shows the second it was scheduled for (plus the lead, for
    /// the early timer), publishes it, and records when it appeared.
    private func alignedTick(_ timer: EVTimer, strategy: Strategy) {
        count(strategy)
        let tick = loop.wallNow
        let lead = strategy == .alignedWithLead ? armedLead : 0
        let scheduled = timer.fireDate.timeIntervalSince1970
        let shown = Int64((scheduled + lead).rounded())
        if strategy == .aligned { alignedTickPhases.append(tick.timeIntervalSince1970 - scheduled) }
        let appeared = publish()
        record(DisplayUpdate(strategy: strategy, shownSecond: shown, tick: tick, appeared: appeared))
        if strategy == .alignedWithLead { rearmLeadIfMoved() }
    }

    /// Spends the publish cost, feeds the measured duration to the lead estimator, and
    /// returns the wall-clock moment the value appeared.
    private func publish() -> Date {
        guard configuration.publishCost > 0 else { return loop.wallNow }
        let before = loop.now
        work(.nanoseconds(Int64((configuration.publishCost * 1e9).rounded())))
        estimator.record((loop.now - before).timeInterval)
        return loop.wallNow
    }

    /// Starts the early timer: after a calibration tick for an automatic lead, at once for a
    /// fixed one.
    private func startLead() {
        switch configuration.lead {
        case .none: return
        case .fixed(let seconds): armLead(seconds)
        case .automatic:
            // The scenario's dummy timer: publish a throwaway value once and time it.
            add(EVTimer(interval: 0, repeats: false, label: "calibration", block: EVRunLoop.isolated { [weak self] _ in
                guard let self else { return }
                _ = publish()
                armLead(estimator.lead)
            }))
        }
    }

    /// (Re)creates the early timer so that it fires `lead` seconds before each whole second.
    private func armLead(_ lead: Double) {
        leadTimer?.invalidate()
        armedLead = lead
        let offset = (1 - lead.truncatingRemainder(dividingBy: 1)).truncatingRemainder(dividingBy: 1)
        let timer = EVTimer(alignedTo: 1, offset: offset, label: "aligned+lead",
            block: EVRunLoop.isolated { [weak self] timer in
            guard let self else { return }
            alignedTick(timer, strategy: .alignedWithLead)
        })
        leadTimer = timer
        loop.add(timer, forMode: .default)
    }

    /// With an automatic lead, moves the early timer when the measured cost moved by more
    /// than half a millisecond.
    private func rearmLeadIfMoved() {
        guard configuration.lead == .automatic, abs(estimator.lead - armedLead) > 0.000_5 else { return }
        armLead(estimator.lead)
    }

    // MARK: Records

    private func count(_ strategy: Strategy) { fires[strategy, default: 0] += 1 }

    private func record(_ update: DisplayUpdate) {
        updates[update.strategy, default: []].append(update)
        onUpdate?(update, self)
    }

    /// The whole second (since 1970) that `date` falls in.
    static func second(of date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
