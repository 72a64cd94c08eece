import Foundation
import RunLoopKit
import Synchronization
import Testing

/// Eight threads add, invalidate, signal, perform, stop and wake one real loop at once.
/// Runs for 2 seconds by default; set `RUNLOOPKIT_STORM_SECONDS` (for example to 30) for a
/// longer storm.
@Suite("Real time: thread storm", .timeLimit(.minutes(10)))
struct StormTests {
    /// What the storm saw; printed so that a long run's figures can be read from the log.
    struct Figures: Sendable, CustomStringConvertible {
        var seconds = 0.0
        var timersAdded = 0
        var sourcesAdded = 0
        var blocksQueued = 0
        var blocksRun = 0
        var blocksRunTwice = 0
        var staleTimers = 0
        var staleSources = 0
        var stops = 0
        var idlePassesPerSecond = 0.0

        var description: String {
            "storm \(seconds) s: \(timersAdded) timers and \(sourcesAdded) sources added and invalidated, "
                + "\(blocksQueued) blocks queued, \(blocksRun) run, \(blocksRunTwice) run twice, "
                + "\(stops) stops; stale: \(staleTimers) timers, \(staleSources) sources; "
                + "idle afterwards: \(idlePassesPerSecond) passes/s"
        }
    }

    @Test("an 8-thread storm of add/invalidate/perform/stop/wakeUp leaves no invalid timer or source, loses and duplicates nothing, and idles")
    func storm() async {
        let seconds = ProcessInfo.processInfo.environment["RUNLOOPKIT_STORM_SECONDS"].flatMap(Double.init) ?? 2
        let figures = await onFreshThreadAwaiting { Self.runStorm(seconds: seconds, threads: 8) }
        print(figures)
        #expect(figures.timersAdded > 0 && figures.sourcesAdded > 0)
        #expect(figures.blocksRun == figures.blocksQueued)
        #expect(figures.blocksRunTwice == 0)
        #expect(figures.staleTimers == 0)
        #expect(figures.staleSources == 0)
        #expect(figures.idlePassesPerSecond < 10)
    }

    /// Busy-waits for `duration`: an add and the invalidate after it meet the loop's
    /// taking of the add from its inbox at varying points.
    static func spin(_ duration: Duration) {
        let clock = ContinuousClock()
        let until = clock.now + duration
        while clock.now < until {}
    }

    /// A block's "ran" mark: set once; a second run is counted.
    final class Once: Sendable {
        let ran = Atomic<Bool>(false)
    }

    /// Runs on the loop's thread: starts the workers, runs the loop until they are done and
    /// everything they queued ran, then measures the idle loop.
    static func runStorm(seconds: Double, threads: Int) -> Figures {
        let loop = EVRunLoop.current
        let other = EVRunLoop.Mode("storm-other")
        loop.addCommonMode(other)
        let keepAlive = EVSource { _ in }
        loop.add(keepAlive, forMode: .common)

        let blocksQueued = Atomic<Int>(0)
        let blocksRun = Atomic<Int>(0)
        let blocksRunTwice = Atomic<Int>(0)
        let timersAdded = Atomic<Int>(0)
        let sourcesAdded = Atomic<Int>(0)
        let stale = Mutex<(timers: Int, sources: Int)>((0, 0))
        let stops = Atomic<Int>(0)
        let workersLeft = Atomic<Int>(threads)
        let finished = Atomic<Bool>(false)
        let end = Date(timeIntervalSinceNow: seconds)

        /// Queues a block that counts itself and, on the loop's thread, checks `check`.
        @Sendable func queueCheck(_ check: @escaping @Sendable () -> Void) {
            let once = Once()
            blocksQueued.add(1, ordering: .relaxed)
            loop.perform(inModes: [.common]) {
                if once.ran.exchange(true, ordering: .relaxed) { blocksRunTwice.add(1, ordering: .relaxed) }
                blocksRun.add(1, ordering: .relaxed)
                check()
            }
        }

        // The racer: adds while the loop is about to sleep (its wait's drain then takes the
        // add) and invalidates after a varying delay, meeting the loop inside its add.
        let waits = FaultTests.WaitCounter()
        let observer = waits.observer()
        loop.add(observer, forMode: .common)

        for worker in 0..<threads {
            Thread.detachNewThread {
                var random = SystemRandomNumberGenerator()
                var pool: [EVTimer] = []
                while worker == 0, Date() < end {
                    waits.awaitNextWait(patience: .milliseconds(100))
                    let timer = EVTimer(interval: 0, repeats: false) { _ in }
                    let source = EVSource { _ in }
                    loop.add(timer, forMode: .common)
                    loop.add(source, forMode: .common)
                    timersAdded.add(1, ordering: .relaxed)
                    sourcesAdded.add(1, ordering: .relaxed)
                    Self.spin(.nanoseconds(Int.random(in: 0..<30_000, using: &random)))
                    timer.invalidate()
                    source.invalidate()
                    queueCheck {
                        let timerLeft = loop.contains(timer, inMode: .default) || loop.contains(timer, inMode: .common)
                        let sourceLeft = loop.contains(source, inMode: .default) || loop.contains(source, inMode: .common)
                        stale.withLock {
                            $0.timers += timerLeft ? 1 : 0
                            $0.sources += sourceLeft ? 1 : 0
                        }
                    }
                }
                while Date() < end {
                    for _ in 0..<50 {
                        switch Int.random(in: 0..<11, using: &random) {
                        case 10:
                            // A batch: the loop takes the adds from its inbox while this thread
                            // invalidates the same timers and sources in the same order.
                            let timers = (0..<20).map { _ in EVTimer(interval: 0, repeats: false) { _ in } }
                            let sources = (0..<20).map { _ in EVSource { _ in } }
                            for (timer, source) in zip(timers, sources) {
                                loop.add(timer, forMode: .common)
                                loop.add(source, forMode: .default)
                            }
                            for (timer, source) in zip(timers, sources) {
                                timer.invalidate()
                                source.invalidate()
                            }
                            timersAdded.add(timers.count, ordering: .relaxed)
                            sourcesAdded.add(sources.count, ordering: .relaxed)
                            queueCheck {
                                let timerCount = timers.filter {
                                    loop.contains($0, inMode: .default) || loop.contains($0, inMode: .common)
                                }.count
                                let sourceCount = sources.filter { loop.contains($0, inMode: .default) }.count
                                stale.withLock {
                                    $0.timers += timerCount
                                    $0.sources += sourceCount
                                }
                            }
                        case 0...3:
                            let repeats = Bool.random(using: &random)
                            let timer = EVTimer(
                                interval: Double.random(in: 0...0.002, using: &random), repeats: repeats,
                                tolerance: Bool.random(using: &random) ? 0 : 0.001
                            ) { _ in }
                            loop.add(timer, forMode: Bool.random(using: &random) ? .common : .default)
                            timersAdded.add(1, ordering: .relaxed)
                            Self.spin(.nanoseconds(Int.random(in: 0..<20_000, using: &random)))
                            // Invalidate now from this thread, or later from the next worker's pool.
                            if Bool.random(using: &random) {
                                timer.invalidate()
                                queueCheck {
                                    if loop.contains(timer, inMode: .default) || loop.contains(timer, inMode: .common)
                                        || loop.contains(timer, inMode: other)
                                    {
                                        stale.withLock { $0.timers += 1 }
                                    }
                                }
                            } else {
                                pool.append(timer)
                            }
                        case 4...5:
                            let source = EVSource { _ in }
                            loop.add(source, forMode: Bool.random(using: &random) ? .common : other)
                            sourcesAdded.add(1, ordering: .relaxed)
                            source.signal()
                            loop.wakeUp()
                            Self.spin(.nanoseconds(Int.random(in: 0..<20_000, using: &random)))
                            source.invalidate()
                            queueCheck {
                                if loop.contains(source, inMode: .common) || loop.contains(source, inMode: other) {
                                    stale.withLock { $0.sources += 1 }
                                }
                            }
                        case 6...7:
                            queueCheck {}
                        case 8:
                            if let timer = pool.popLast() {
                                timer.invalidate()
                                queueCheck {
                                    if loop.contains(timer, inMode: .default) || loop.contains(timer, inMode: .common)
                                        || loop.contains(timer, inMode: other)
                                    {
                                        stale.withLock { $0.timers += 1 }
                                    }
                                }
                            }
                        default:
                            if worker % 2 == 0 {
                                loop.stop()
                                stops.add(1, ordering: .relaxed)
                            } else {
                                loop.wakeUp()
                            }
                        }
                    }
                }
                for timer in pool { timer.invalidate() }
                let leftovers = pool
                queueCheck {
                    let count = leftovers.filter {
                        loop.contains($0, inMode: .default) || loop.contains($0, inMode: .common)
                            || loop.contains($0, inMode: other)
                    }.count
                    stale.withLock { $0.timers += count }
                }
                if workersLeft.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                    loop.perform(inModes: [.common]) { finished.store(true, ordering: .relaxed) }
                }
            }
        }

        var modeSwitch = false
        while !finished.load(ordering: .relaxed) {
            modeSwitch.toggle()
            loop.run(mode: modeSwitch ? .default : other, for: .milliseconds(20))
        }
        observer.invalidate()
        loop.run(mode: .default, until: Date())  // takes the last invalidations from the inbox
        loop.resetStatistics()
        loop.run(mode: .default, for: .seconds(1))
        let passes = loop.statistics.passes
        keepAlive.invalidate()
        let (staleTimers, staleSources) = stale.withLock { ($0.timers, $0.sources) }
        return Figures(
            seconds: seconds, timersAdded: timersAdded.load(ordering: .relaxed),
            sourcesAdded: sourcesAdded.load(ordering: .relaxed), blocksQueued: blocksQueued.load(ordering: .relaxed),
            blocksRun: blocksRun.load(ordering: .relaxed), blocksRunTwice: blocksRunTwice.load(ordering: .relaxed),
            staleTimers: staleTimers, staleSources: staleSources, stops: stops.load(ordering: .relaxed),
            idlePassesPerSecond: Double(passes))
    }
}
