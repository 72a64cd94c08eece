import CLibevBench
import Foundation
import RunLoopKit
import Synchronization

/// The workloads of the gated instruction rows (``Gates``): each runs on one thread with
/// one loop and never waits, so that callgrind counts the same instructions on any machine
/// and under any load. The counted part is `measuredGate` (`--toggle-collect='*measuredGate*'`).
/// Each first runs its loop for two seconds (``warmUp(_:)``), so that the counted part
/// takes the paths a running program takes: the CPU counter's rate measured and the clock
/// anchored, not a clock read per question.
enum GateProbes {
    /// Runs `loop` with a 5 ms repeating timer for two seconds, in a mode of its own (the
    /// default mode's queue stays untouched): its waits' clock readings measure the
    /// counter's rate (process-wide; under valgrind, whose clock reads are slow, it needs
    /// long spans) and anchor the loop's counter.
    static func warmUp(_ loop: EVRunLoop) {
        let mode = EVRunLoop.Mode("loop-bench warm-up")
        let timer = EVTimer(interval: 0.005, repeats: true) { _ in }
        loop.add(timer, forMode: mode)
        loop.run(mode: mode, for: .seconds(2))
        timer.invalidate()
    }

    /// Runs `body` on a fresh thread with the thread's loop, warmed up.
    private static func onWarmLoop(_ body: @escaping @Sendable (EVRunLoop) -> Double) -> Double {
        onFreshThread {
            let loop = EVRunLoop.current
            warmUp(loop)
            return body(loop)
        }
    }

    /// `gate-fire N K`: N repeating timers already due (their first fire within the last
    /// millisecond, then every hour: each fire keeps up with its grid), all fired by one
    /// polling pass, the loop recording K (``TimerRun/Observing``: 0 nothing, 1 metrics,
    /// 2 a trace).
    ///
    /// The first fires are instants of the loop's clock in a seeded random order, not one
    /// `Date`: a `Date` is converted at each add from two clock reads, so the order of the
    /// timers' instants, and with it how many go to the heap and what its sifts cost (the
    /// row's largest part), followed however long those reads took under the machine's load.
    static func fire(count: Int, observing: Int) -> Double {
        onWarmLoop { loop in
            switch TimerRun.Observing(rawValue: observing) ?? .nothing {
            case .nothing, .stallWatch: break
            case .metrics: loop.recordsMetrics = true
            case .trace: loop.trace = EVRunLoop.Trace()
            }
            let fires = Tally()
            let now = loop.now
            var random = SeededRandom(seed: 38)
            let timers = (0..<count).map { _ in
                let due = now - .nanoseconds(Int64.random(in: 1...1_000_000, using: &random))
                return EVTimer(fireAt: due, interval: .seconds(3_600), repeats: true) { _ in fires.bump() }
            }
            for timer in timers { loop.add(timer, forMode: .default) }
            measuredGate { _ = loop.run(mode: .default, for: .zero) }
            for timer in timers { timer.invalidate() }
            return Double(fires.value)
        }
    }

    /// `gate-schedule N`: the schedule workload's two rounds (create + add N one-shots 1–2 s
    /// away, invalidate them in random order; the second round counted, in `measuredAdd`
    /// and `measuredInvalidate`), after the warm-up.
    static func schedule(count: Int) -> Double {
        lb_keep_freed_memory()
        return onWarmLoop { _ in
            _ = ScheduleCost.twoRounds(ScheduleCost.Input(count: count), on: .runLoopKit)
            return Double(count)
        }
    }

    /// `gate-pass P`: P polling passes of a loop whose only timer is an hour away.
    static func pass(passes: Int) -> Double {
        onWarmLoop { loop in
            let timer = EVTimer(interval: 3_600, repeats: false) { _ in }
            loop.add(timer, forMode: .default)
            loop.run(mode: .default, for: .zero)
            measuredGate { for _ in 0..<passes { loop.run(mode: .default, for: .zero) } }
            timer.invalidate()
            return Double(passes)
        }
    }

    /// `gate-descriptors N`: N descriptor sources (the read ends of N pipes) created and
    /// added, and the polling pass that starts watching them.
    static func descriptors(count: Int) -> Double {
        DescriptorSources.raiseDescriptorLimit(to: 2 * count + 1_000)
        let pipes = (0..<count).map { _ in
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { fatalError("loop-bench: pipe failed (\(errno))") }
            return ends
        }
        defer { for ends in pipes { close(ends[0]); close(ends[1]) } }
        return onWarmLoop { loop in
            var sources: [EVSource] = []
            sources.reserveCapacity(count)
            measuredGate {
                for ends in pipes {
                    let source = try! EVSource(fileDescriptor: ends[0]) { _ in }
                    loop.add(source, forMode: .default)
                    sources.append(source)
                }
                loop.run(mode: .default, for: .zero)
            }
            for source in sources { source.invalidate() }
            return Double(count)
        }
    }

    /// `gate-perform N`: N blocks performed on the loop from its own thread, and the
    /// polling pass that runs them.
    static func perform(count: Int) -> Double {
        onWarmLoop { loop in
            let ran = Tally()
            measuredGate {
                for _ in 0..<count { loop.perform { ran.bump() } }
                loop.run(mode: .default, for: .zero)
            }
            return Double(ran.value)
        }
    }

    /// `gate-task N`: N tasks started from the loop's thread with the loop as their
    /// executor preference, and the passes that run them.
    static func task(count: Int) -> Double {
        onWarmLoop { loop in
            let ran = Tally()
            measuredGate {
                for _ in 0..<count { Task(executorPreference: loop) { ran.bump() } }
                while ran.value < count { loop.run(mode: .default, for: .zero) }
            }
            return Double(ran.value)
        }
    }

    /// `gate-actor N`: N calls awaited in a row on an actor pinned to the loop, from a task
    /// that prefers the loop as its executor, and the passes that run them.
    static func actor(count: Int) -> Double {
        onWarmLoop { loop in
            let actor = LoopActor(loop: loop)
            let done = Tally()
            measuredGate {
                Task(executorPreference: loop) {
                    var sum = 0
                    for index in 0..<count { sum &+= await actor.echo(index) }
                    precondition(sum >= 0)
                    done.bump()
                }
                while done.value == 0 { loop.run(mode: .default, for: .zero) }
            }
            return Double(count)
        }
    }
}

/// Runs `body`: the counted part of every gated row (`--toggle-collect='*measuredGate*'`).
@inline(never)
func measuredGate(_ body: () -> Void) {
    body()
}

/// A count bumped from callouts and tasks on one thread.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func bump() { count.add(1, ordering: .relaxed) }
}
