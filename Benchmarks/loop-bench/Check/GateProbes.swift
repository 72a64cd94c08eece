import CLibevBench
import Foundation
import RunLoopKit

/// The workloads of the gated instruction rows (``Gates``): one thread, one loop, no wait,
/// so that callgrind counts the same on any machine. The counted part is `measuredGate`,
/// after a warm-up (``warmUp(_:)``) that takes it down a running program's paths.
enum GateProbes {
    /// Runs `loop` with a 5 ms timer for two seconds in a mode of its own: its waits measure
    /// the CPU counter's rate (long spans under valgrind) and anchor the loop's clock.
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

    /// `gate-fire N K`: N repeating timers due within the last millisecond (then hourly),
    /// fired by one polling pass, the loop recording K (0 nothing, 1 metrics, 2 a trace).
    /// Their instants are seeded random ones of the loop's clock, not `Date`s: a `Date`'s
    /// conversion reads the clock twice, so the heap's work followed the machine's load.
    static func fire(count: Int, observing: Int) -> Double {
        onWarmLoop { loop in
            switch TimerRun.Observing(rawValue: observing) ?? .nothing {
            case .nothing, .stallWatch: break
            case .metrics: loop.recordsMetrics = true
            case .trace: loop.trace = EVRunLoop.Trace()
            }
            let fires = AtomicCounter()
            let now = loop.now
            var random = SeededRandom(seed: 38)
            let timers = (0..<count).map { _ in
                let due = now - .nanoseconds(Int64.random(in: 1...1_000_000, using: &random))
                return EVTimer(fireAt: due, interval: .seconds(3_600), repeats: true) { _ in fires.increment() }
            }
            for timer in timers { loop.add(timer, forMode: .default) }
            measuredGate { _ = loop.run(mode: .default, for: .zero) }
            for timer in timers { timer.invalidate() }
            return Double(fires.value)
        }
    }

    /// `gate-schedule N`: the schedule workload's two rounds, the second counted.
    static func schedule(count: Int) -> Double {
        lb_keep_freed_memory()
        return onWarmLoop { _ in
            _ = ScheduleCost.rounds(ScheduleCost.Input(count: count), on: .runLoopKit, timed: 1)
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

    /// `gate-descriptors N`: N pipe read ends' sources created, added, and first watched.
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

    /// `gate-perform N`: N blocks performed from the loop's thread, and the pass that runs them.
    static func perform(count: Int) -> Double {
        onWarmLoop { loop in
            let ran = AtomicCounter()
            measuredGate {
                for _ in 0..<count { loop.perform { ran.increment() } }
                loop.run(mode: .default, for: .zero)
            }
            return Double(ran.value)
        }
    }

    /// `gate-task N`: N tasks preferring the loop started from its thread, and their passes.
    static func task(count: Int) -> Double {
        onWarmLoop { loop in
            let ran = AtomicCounter()
            measuredGate {
                for _ in 0..<count { Task(executorPreference: loop) { ran.increment() } }
                while ran.value < count { loop.run(mode: .default, for: .zero) }
            }
            return Double(ran.value)
        }
    }

    /// `gate-actor N`: N calls awaited in a row on an actor pinned to the loop, from a task
    /// preferring the loop, and their passes.
    static func actor(count: Int) -> Double {
        onWarmLoop { loop in
            let actor = LoopActor(loop: loop)
            let done = AtomicCounter()
            measuredGate {
                Task(executorPreference: loop) {
                    var sum = 0
                    for index in 0..<count { sum &+= await actor.echo(index) }
                    precondition(sum >= 0)
                    done.increment()
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
