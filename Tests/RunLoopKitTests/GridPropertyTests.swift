import PropertyBased
import RunLoopKit
import Testing

/// The shared wake grid (`timerCoalescing = .sharedGrid`) under virtual time: random
/// schedules on several loops whose clocks share one boot phase, checked against an
/// independent model of the placement, against the tolerances, and against the greedy count.
@Suite("Shared wake grid (property)")
struct GridPropertyTests {
    typealias Spec = TimerPropertyTests.Spec

    static let ms: Int64 = 1_000_000
    /// The grid steps, restated: 15/16 of 60 s, 10 s, 1 s, 250, 100, 50 and 25 ms, floored
    /// to whole milliseconds.
    static let steps: [Int64] = [56_250, 9_375, 937, 234, 93, 46, 23].map { $0 * ms }
    static let horizon: Int64 = 3_000 * ms
    /// The run's length: half a millisecond past the horizon, off every grid point.
    static let runLength = horizon + ms / 2

    /// Timers that repeat until the horizon (or fire once): their dates do not depend on
    /// how many times they fired, so the greedy count is a fair yardstick.
    static let spec = zip(Gen.int(in: 0...500), Gen.int(in: 0...300), Gen.int(in: 0...200)).map {
        phase, interval, tolerance in
        Spec(phase: Int64(phase), interval: Int64(interval), tolerance: Int64(tolerance), fires: 0)
    }

    /// A fire: which timer, its scheduled instant and when it ran (absolute nanoseconds).
    struct Fire: Hashable, Sendable, CustomStringConvertible {
        var timer: Int
        var scheduled: Int64
        var at: Int64
        var description: String { "t\(timer)@\(scheduled / 1_000_000)→\(at / 1_000_000)" }
    }

    /// What a run did: its fires and the instant each wait ended (the last: the deadline).
    struct Outcome: Equatable {
        var fires: [Fire] = []
        var wakes: [Int64] = []
    }

    /// One wait of the model: its window and whether the grid could serve it without
    /// changing which timers fire (a point of some step between `served` and `latest`).
    struct Wait {
        var served: Int64
        var latest: Int64
        var neutralPointExists: Bool
    }

    @Test("random schedules on several loops: the model's wakes exactly, on the grid when the window allows, never early or past tolerance, at most the greedy count plus lock-step wakes")
    func gridMatchesModel() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...59_999), Self.spec.array(of: 1...12).array(of: 2...4)) {
            phaseMillis, loops in
            let phase = Int64(phaseMillis) * Self.ms
            for specs in loops {
                let grid = Self.runLoop(specs, phase: phase, grid: true)
                let greedy = Self.runLoop(specs, phase: phase, grid: false)
                let model = Self.model(specs, phase: phase)
                #expect(grid == model.outcome)
                #expect(greedy == Self.model(specs, phase: nil).outcome)

                for fire in grid.fires {
                    #expect(fire.at >= fire.scheduled, "early: \(fire)")
                    #expect(fire.at <= fire.scheduled + specs[fire.timer].tolerance * Self.ms, "late: \(fire)")
                }
                for (wake, wait) in zip(grid.wakes, model.waits) where wait.neutralPointExists {
                    #expect(Self.isGridPoint(wake, phase: phase) && wake >= wait.served && wake <= wait.latest,
                            "wake \(wake) off the grid in [\(wait.served), \(wait.latest)]")
                }
                // Neutral wakes keep the greedy count; each lock-step wake may cost one.
                #expect(grid.wakes.count <= greedy.wakes.count + model.lockSteps)
                if model.lockSteps == 0 { #expect(grid.wakes.count <= greedy.wakes.count) }
            }
        }
    }

    @Test("a dense stream on four loops wakes on shared instants, about once per grid step")
    func denseStreamsShareInstants() {
        let phase = 17 * Self.ms
        var generator = SplitMix(seed: 15)
        let loops: [[Spec]] = (0..<4).map { _ in
            (0..<250).map { _ in
                Spec(phase: Int64(generator.next() % 200), interval: 200, tolerance: 100, fires: 0)
            }
        }
        func buckets(_ outcomes: [Outcome]) -> Int {
            Set(outcomes.flatMap { $0.wakes.dropLast().map { $0 / Self.ms } }).count
        }
        let grid = loops.map { Self.runLoop($0, phase: phase, grid: true) }
        let greedy = loops.map { Self.runLoop($0, phase: phase, grid: false) }
        let seconds = Double(Self.horizon) / 1e9
        for (outcome, specs) in zip(grid, loops) {
            // 3 s of 93 ms steps: 33 wakes, under 11 a second.
            #expect(Double(outcome.wakes.count - 1) / seconds <= 11)
            for fire in outcome.fires {
                #expect(fire.at >= fire.scheduled && fire.at <= fire.scheduled + specs[fire.timer].tolerance * Self.ms)
            }
        }
        // One loop alone, four loops together: the same instants.
        let alone = buckets([grid[0]])
        #expect(Double(buckets(grid)) <= 1.25 * Double(alone))
        // Each loop on its own rule: four loops wake at about four times as many instants.
        #expect(buckets(greedy) >= 3 * buckets([greedy[0]]))
    }

    @Test("a lone tolerant timer fires on the grid, later than its date and within its tolerance")
    func loneTimerFiresOnGrid() {
        // A timer 50 ms after the start with 100 ms of tolerance: window [50, 150] ms. The
        // clock starts at 1 000 000 ms; with phase 0 the 234 ms grid has a point at
        // 999 882 + 234 = 1 000 116 ms: 116 ms after the start, the coarsest step that fits.
        let spec = Spec(phase: 50, interval: 0, tolerance: 100, fires: 0)
        let grid = Self.runLoop([spec], phase: 0, grid: true)
        let greedy = Self.runLoop([spec], phase: 0, grid: false)
        let start = EVVirtualClock().now.nanoseconds
        #expect(grid.fires.map { ($0.at - start) / Self.ms } == [116])
        #expect(greedy.fires.map { ($0.at - start) / Self.ms } == [50])
    }

    @Test("a loop coalesces per loop unless told otherwise")
    func defaultIsPerLoop() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        #expect(loop.timerCoalescing == .perLoop)
        loop.timerCoalescing = .sharedGrid
        #expect(loop.timerCoalescing == .sharedGrid)
    }

    // MARK: Running and modelling

    /// Runs `specs` on a virtual-clock loop whose grid phase is `phase`.
    static func runLoop(_ specs: [Spec], phase: Int64, grid: Bool) -> Outcome {
        let clock = EVVirtualClock(bootPhase: .nanoseconds(phase))
        let loop = EVRunLoop(clock: clock)
        if grid { loop.timerCoalescing = .sharedGrid }
        let start = clock.now
        let outcome = LoopBox(Outcome())
        for (index, spec) in specs.enumerated() {
            let timer = EVTimer(
                fireAt: start + .milliseconds(spec.phase), interval: .milliseconds(spec.interval),
                repeats: spec.interval > 0, tolerance: .milliseconds(spec.tolerance)
            ) { timer in
                outcome.value.fires.append(
                    Fire(timer: index, scheduled: timer.fireInstant!.nanoseconds, at: clock.now.nanoseconds))
            }
            loop.add(timer, forMode: .default)
        }
        loop.add(EVObserver(activities: .afterWaiting) { _, _ in outcome.value.wakes.append(clock.now.nanoseconds) },
                 forMode: .default)
        loop.add(EVSource { _ in }, forMode: .default)  // keeps the run going to its deadline
        loop.run(mode: .default, for: .nanoseconds(runLength))
        return outcome.value
    }

    /// The model: greedy windows (the earliest tolerance end, the latest fire date it
    /// covers, the earliest fire date), the wake placed on the grid of `phase` (nil: at the
    /// served date, the per-loop rule); due timers fire in (date, creation) order and a
    /// repeating one moves to its first date after the wake. Also returns each wait's window
    /// and how many wakes were lock-step ones.
    static func model(_ specs: [Spec], phase: Int64?) -> (outcome: Outcome, waits: [Wait], lockSteps: Int) {
        let start = EVVirtualClock().now.nanoseconds
        let deadline = start + runLength
        var next: [Int64?] = specs.map { start + $0.phase * ms }
        var outcome = Outcome()
        var waits: [Wait] = []
        var lockSteps = 0
        while true {
            let live = specs.indices.filter { next[$0] != nil }
            let tolerant = live.filter { specs[$0].tolerance > 0 }
            let exactFire = live.filter { specs[$0].tolerance == 0 }.map { next[$0]! }.min() ?? .max
            let tolerantEnd = tolerant.map { next[$0]! + specs[$0].tolerance * ms }.min() ?? .max
            var first = exactFire, served = exactFire, latest = exactFire
            let precise = exactFire <= tolerantEnd
            if !precise {
                served = tolerant.map { next[$0]! }.filter { $0 <= tolerantEnd }.max()!
                first = tolerant.map { next[$0]! }.min()!
                latest = tolerantEnd
            }
            latest = min(latest, deadline)
            var wake = deadline
            if served < deadline {
                wake = served
                if let phase, !precise, let (point, lockStep) = place(first: first, served: served, end: latest, phase: phase) {
                    wake = point
                    if lockStep { lockSteps += 1 }
                }
            }
            let neutral = phase.map { phase in
                !precise && served < deadline && steps.contains { step in
                    let point = latest - ((latest - phase) % step + step) % step
                    return point >= served
                }
            } ?? false
            waits.append(Wait(served: served, latest: latest, neutralPointExists: neutral))
            outcome.wakes.append(wake)
            let due = live.filter { next[$0]! <= wake }.sorted { (next[$0]!, $0) < (next[$1]!, $1) }
            for i in due {
                let scheduled = next[i]!
                outcome.fires.append(Fire(timer: i, scheduled: scheduled, at: wake))
                let interval = specs[i].interval * ms
                next[i] = interval == 0 ? nil : scheduled + ((wake - scheduled) / interval + 1) * interval
            }
            if wake >= deadline { break }
        }
        return (outcome, waits, lockSteps)
    }

    /// The coarsest step's last point at or before `end` that is at or after `served`
    /// (neutral); else the last point of the step that fills 9/10 to all of `[first, end]`
    /// (lock-step); else nil.
    static func place(first: Int64, served: Int64, end: Int64, phase: Int64) -> (Int64, Bool)? {
        func lastPoint(_ step: Int64) -> Int64 { phase % step + (end - phase % step) / step * step }
        if let step = steps.first(where: { lastPoint($0) >= served }) { return (lastPoint(step), false) }
        if let step = steps.first(where: { $0 <= end - first && 10 * $0 >= 9 * (end - first) }) {
            return (lastPoint(step), true)
        }
        return nil
    }

    static func isGridPoint(_ instant: Int64, phase: Int64) -> Bool {
        steps.contains { (instant - phase) % $0 == 0 }
    }
}
