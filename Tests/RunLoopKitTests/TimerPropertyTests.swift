import PropertyBased
import RunLoopKit
import Testing

/// Random timer schedules under the virtual clock, checked against an independent model of
/// greedy coalescing: the loop must fire exactly what the model fires, when it fires it.
@Suite("Timer schedules (property)")
struct TimerPropertyTests {
    /// One random timer, in milliseconds.
    struct Spec: Sendable, CustomStringConvertible {
        var phase: Int64      // first fire
        var interval: Int64   // 0: one-shot
        var tolerance: Int64
        var fires: Int        // invalidates itself after this many fires; 0: never

        var description: String { "{phase \(phase) interval \(interval) tol \(tolerance) fires \(fires)}" }
    }

    static let spec = zip(
        Gen.int(in: 0...500), Gen.int(in: 0...300), Gen.int(in: 0...200), Gen.int(in: 0...4)
    ).map { phase, interval, tolerance, fires in
        Spec(phase: Int64(phase), interval: Int64(interval), tolerance: Int64(tolerance), fires: fires)
    }

    /// A fire: which timer, its scheduled instant and when it ran (ms after the start).
    struct Fire: Hashable, Sendable, CustomStringConvertible {
        var timer: Int
        var scheduled: Int64
        var at: Int64
        var description: String { "t\(timer)@\(scheduled)→\(at)" }
    }

    static let horizon: Int64 = 3_000

    @Test("fires and wakeups equal the greedy model: never early, never past tolerance, no drift")
    func matchesGreedyModel() async {
        await propertyCheck(count: 200, input: Self.spec.array(of: 1...25)) { specs in
            let (fires, wakeups) = Self.runLoop(specs)
            let (modelFires, modelWakeups) = Self.model(specs)
            #expect(fires == modelFires)
            #expect(wakeups == modelWakeups + 1)  // + the final wait to the run's deadline
            for fire in fires {
                #expect(fire.at >= fire.scheduled)
                #expect(fire.at <= fire.scheduled + specs[fire.timer].tolerance)
            }
        }
    }

    /// Runs the specs on a virtual-clock loop.
    static func runLoop(_ specs: [Spec]) -> (fires: [Fire], wakeups: Int) {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let start = clock.now
        let ms = { @Sendable (instant: EVRunLoop.Instant) in (instant.nanoseconds - start.nanoseconds) / 1_000_000 }
        let fires = LoopBox<[Fire]>([])
        for (index, spec) in specs.enumerated() {
            let count = LoopBox(0)
            let timer = EVTimer(
                fireAt: start + .milliseconds(spec.phase), interval: .milliseconds(spec.interval),
                repeats: spec.interval > 0, tolerance: .milliseconds(spec.tolerance)
            ) { timer in
                fires.value.append(Fire(timer: index, scheduled: ms(timer.fireInstant!), at: ms(clock.now)))
                count.value += 1
                if count.value == spec.fires { timer.invalidate() }
            }
            loop.add(timer, forMode: .default)
        }
        // A keep-alive, so the run lasts to the horizon even when every timer is gone.
        loop.add(EVSource { _ in }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(horizon) + .microseconds(500))
        return (fires.value, loop.statistics.wakeups)
    }

    /// The greedy model: the earliest `scheduled + tolerance` decides which timers the next
    /// wake serves (every timer scheduled by then); the wake happens at the latest of their
    /// scheduled dates; they fire in order of (scheduled, creation); a repeating timer's next
    /// date is the first `scheduled + k * interval` after the wake.
    static func model(_ specs: [Spec]) -> (fires: [Fire], wakeups: Int) {
        var next: [Int64?] = specs.map { $0.phase }
        var fired = [Int](repeating: 0, count: specs.count)
        var fires: [Fire] = []
        var wakeups = 0
        while true {
            let deadlines = specs.indices.compactMap { i in next[i].map { $0 + specs[i].tolerance } }
            // Past the horizon, the last wake is the run's own deadline, at horizon + 0.5 ms
            // (shown as `horizon`, as the loop's times are truncated to whole milliseconds).
            let earliest = deadlines.min() ?? .max
            let timerWake = specs.indices.compactMap { next[$0] }.filter { $0 <= earliest }.max() ?? .max
            let last = timerWake > horizon
            let wake = last ? horizon : timerWake
            wakeups += last ? 0 : 1
            let due = specs.indices.filter { next[$0].map { $0 <= wake } ?? false }
                .sorted { (next[$0]!, $0) < (next[$1]!, $1) }
            for i in due {
                let scheduled = next[i]!
                fires.append(Fire(timer: i, scheduled: scheduled, at: wake))
                fired[i] += 1
                if specs[i].interval == 0 || fired[i] == specs[i].fires {
                    next[i] = nil
                } else {
                    let interval = specs[i].interval
                    next[i] = scheduled + ((wake - scheduled) / interval + 1) * interval
                }
            }
            if last { break }
        }
        return (fires, wakeups)
    }
}
