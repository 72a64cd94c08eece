import ExampleSupport
import Foundation
import RunLoopKit

/// The scene of the Q&A answer: several timers due in the same pass plus a block, each
/// reading `Date()`, the observer-based wake date (``ObservedWakeDate``) and the built-in
/// `EVRunLoop.wakeDate`; every other pass one callout is slow; now and then the block runs
/// a nested run in a second mode, where the observer registers itself lazily.
///
/// All dates come from a `clock` closure and slow work from a `work` closure, so tests
/// drive a session on an `EVVirtualClock` loop.
///
/// The session is the model of a main-actor program: it lives on the main actor, runs on
/// ``RunLoopKit/EVRunLoop/main`` in the command (on a loop the main actor runs, in tests),
/// and its timer and block callouts use its state through `EVRunLoop.isolated`, which checks
/// that they run on the main actor.
@MainActor
public final class WakeDateSession {

    /// Spends the given time, simulating a slow callout.
    public typealias Work = @Sendable (Duration) -> Void

    /// The second mode, run nested from the block.
    public nonisolated static let modal = EVRunLoop.Mode("modal")

    /// The run loop everything runs on.
    public let loop: EVRunLoop
    /// What this session does.
    public let configuration: WakeDateConfiguration
    /// The answer's observer-based wake date.
    public let observed: ObservedWakeDate
    private let clock: () -> Date
    private let work: Work
    /// Called after each pass of the scene, for the live display.
    public var onPass: ((PassRecord, WakeDateSession) -> Void)?

    private var rows: [EVTimer] = []
    private var modalTimer: EVTimer?
    /// Every pass so far.
    public private(set) var passes: [PassRecord] = []
    /// The readings taken inside nested runs of the second mode.
    public private(set) var nestedReadings: [Reading] = []

    /// Creates a session; nothing runs until ``start()``.
    ///
    /// - Parameters:
    ///   - clock: the current date; `Date()` by default.
    ///   - work: spends the slow callout's time; sleeps by default.
    public init(
        loop: EVRunLoop, configuration: WakeDateConfiguration,
        clock: @escaping () -> Date = { Date() }, work: @escaping Work = WakeDateSession.sleep
    ) {
        self.loop = loop
        self.configuration = configuration
        self.clock = clock
        self.work = work
        observed = ObservedWakeDate(loop: loop, clock: clock)
    }

    /// Sleeps the calling thread for `duration`: the default slow work.
    public nonisolated static let sleep: Work = { duration in ThreadSleep.sleep(for: duration) }

    /// Adds the row timers to the default mode and a 10 ms timer to the second mode.
    /// The rows share a fire date and a 10 ms tolerance, so the loop serves them in one
    /// wake.
    public func start() {
        for row in 1...configuration.timers {
            let timer = EVTimer(interval: configuration.interval, repeats: true, tolerance: 0.01,
                                label: "row \(row)", block: EVRunLoop.isolated { [weak self] _ in self?.rowFired(row) })
            rows.append(timer)
            loop.add(timer, forMode: .default)
        }
        let modal = EVTimer(interval: 0.01, repeats: true, label: "modal", block: EVRunLoop.isolated { [weak self] _ in
            guard let self else { return }
            nestedReadings.append(read("modal"))
        })
        modalTimer = modal
        loop.add(modal, forMode: Self.modal)
    }

    /// Stops every timer and the observer, and returns what was measured.
    public func finish() -> WakeDateSummary {
        // The examples' one ownership idiom: the session keeps its timers and invalidates them
        // when it stops; their callouts hold the session weakly.
        for timer in rows { timer.invalidate() }
        modalTimer?.invalidate()
        rows.removeAll()
        modalTimer = nil
        observed.invalidate()
        return WakeDateSummary(session: self)
    }

    /// The three readings of a callout, taken back to back.
    private func read(_ callout: String) -> Reading {
        let now = clock()
        let registrations = observed.registrations.count
        let observedDate = observed.date
        return Reading(callout: callout, date: now, observed: observedDate,
                       wakeDate: loop.wakeDate ?? now, wakeInstant: loop.wakeInstant ?? loop.now,
                       registered: observed.registrations.count > registrations)
    }

    /// A row timer: the first one opens the pass record and queues the block.
    private func rowFired(_ row: Int) {
        if row == 1 {
            let index = passes.count
            passes.append(PassRecord(index: index, isSlow: configuration.slowMilliseconds > 0 && index % 2 == 1))
            loop.perform(inModes: [.default], label: "block", EVRunLoop.isolated { [weak self] in self?.blockRan() })
        }
        passes[passes.count - 1].readings.append(read("row \(row)"))
        if row == 2, passes[passes.count - 1].isSlow {
            passes[passes.count - 1].slowIndex = passes[passes.count - 1].readings.count - 1
            work(.nanoseconds(Int64((configuration.slowMilliseconds * 1e6).rounded())))
        }
    }

    /// The block of the pass: reads, then every few passes runs the second mode nested.
    private func blockRan() {
        passes[passes.count - 1].readings.append(read("block"))
        let pass = passes[passes.count - 1]
        if pass.index % configuration.nestedEvery == 1 % configuration.nestedEvery {
            passes[passes.count - 1].ranNested = true
            loop.run(mode: Self.modal, for: .milliseconds(35))
        }
        onPass?(passes[passes.count - 1], self)
    }
}
