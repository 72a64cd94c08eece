// Built with the package trait "Metrics" only (make test enables it).
#if Metrics
import CoreMetrics
import Foundation
import MetricsTestKit
import RunLoopKit
import RunLoopKitMetrics
import Synchronization
import Testing

/// What EVRunLoopMetricsReporter sent, read back through swift-metrics' own test factory.
@Suite("RunLoopKitMetrics: a loop's figures through swift-metrics, on the virtual clock")
struct ReporterTests {
    let main = [("loop", "main")]

    /// A virtual loop recording its metrics, after a run: asleep 0–10 ms, an observer of
    /// 0.25 ms after the wait, then a timer of 2 ms that fired 0.25 ms late.
    func timedRun() -> (EVVirtualClock, EVRunLoop) {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        loop.add(EVObserver(activities: .afterWaiting, label: "o") { _, _ in
            clock.advance(by: .microseconds(250))
        }, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "t") { _ in
            clock.advance(by: .milliseconds(2))
        }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        return (clock, loop)
    }

    @Test("one report: counters, the busy ratio, callout and lateness timers, the longest callout")
    func oneReport() throws {
        let (_, loop) = timedRun()
        let factory = SecondsCounters()
        let metrics = factory.test
        let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main", calloutLabels: 4, factory: factory)
        reporter.report()

        #expect(try metrics.expectCounter("runloop_passes_total", main).totalValue == 1)
        #expect(try metrics.expectCounter("runloop_wakes_total", main + [("reason", "deadline")]).totalValue == 1)
        #expect(try metrics.expectCounter("runloop_wakes_total", main + [("reason", "wakeUp")]).values.isEmpty)
        #expect(try metrics.expectCounter("runloop_callouts_total", main + [("kind", "timer")]).totalValue == 1)
        #expect(try metrics.expectCounter("runloop_callouts_total", main + [("kind", "observer")]).totalValue == 1)
        #expect(factory.values("runloop_busy_seconds_total") == [0.00225])
        #expect(factory.values("runloop_asleep_seconds_total") == [0.01])
        #expect(try metrics.expectGauge("runloop_busy_ratio", main).lastValue == 2.25 / 12.25)
        // Each value as its bucket's midpoint: 2 ms is in [1,835,008, 2,097,152) ns, 0.25 ms
        // in [229,376, 262,144) ns.
        #expect(try metrics.expectTimer("runloop_callout_duration_seconds", main + [("kind", "timer")]).values == [1_966_080])
        #expect(try metrics.expectTimer("runloop_callout_duration_seconds", main + [("kind", "observer")]).values == [245_760])
        #expect(try metrics.expectTimer("runloop_timer_lateness_seconds", main).values == [245_760])
        #expect(try metrics.expectGauge("runloop_longest_callout_seconds",
                                        main + [("kind", "timer"), ("callout", "t")]).lastValue == 0.002)
    }

    @Test("a second report sends only what came since the first; a reset starts again from zero")
    func differences() throws {
        let (clock, loop) = timedRun()
        let factory = SecondsCounters()
        let metrics = factory.test
        let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main", factory: factory)
        reporter.report()
        loop.add(EVTimer(interval: .milliseconds(5), repeats: false, label: "u") { _ in
            clock.advance(by: .milliseconds(1))
        }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        reporter.report()

        let passes = try metrics.expectCounter("runloop_passes_total", main)
        #expect(passes.values == [1, 1])
        // The second run: the observer (0.25 ms) and "u" (1 ms), 5 ms asleep.
        #expect(factory.values("runloop_busy_seconds_total") == [0.00225, 0.00125])
        #expect(factory.values("runloop_asleep_seconds_total") == [0.01, 0.005])
        #expect(try metrics.expectTimer("runloop_callout_duration_seconds", main + [("kind", "timer")]).values
                    == [1_966_080, 983_040])  // 1 ms: [917,504, 1,048,576) ns
        // The longest is still "t": no new gauge.
        #expect(metrics.recorders(label: "runloop_longest_callout_seconds").count == 1)

        loop.resetMetrics()
        loop.perform(label: "b") {}
        loop.run(mode: .default, for: .zero)
        reporter.report()
        #expect(passes.values == [1, 1, 1])
        #expect(try metrics.expectCounter("runloop_callouts_total", main + [("kind", "block")]).totalValue == 1)
    }

    @Test("a busy histogram reaches a Timer as at most samplesPerReport values, in proportion")
    func samplesPerReport() throws {
        let loop = EVRunLoop(clock: EVVirtualClock())
        loop.recordsMetrics = true
        for index in 0..<2_000 { loop.perform(label: "b\(index)") {} }
        loop.run(mode: .default, for: .zero)
        let metrics = TestMetrics()
        EVRunLoopMetricsReporter(loop: loop, label: "main", samplesPerReport: 100, factory: metrics).report()

        #expect(try metrics.expectCounter("runloop_callouts_total", main + [("kind", "block")]).totalValue == 2_000)
        #expect(try metrics.expectTimer("runloop_callout_duration_seconds", main + [("kind", "block")]).values
                    == Array(repeating: 0, count: 100))
    }

    @Test("start(every:) reports from a timer of the loop; stop() ends it")
    func periodic() throws {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        let factory = SecondsCounters()
        let metrics = factory.test
        let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main", factory: factory)
        reporter.start(every: .seconds(1))
        loop.run(mode: .default, for: .milliseconds(3_500))
        reporter.stop()
        loop.run(mode: .default, for: .seconds(2))

        // Reports at 1, 2 and 3 s; each sees the passes since the one before.
        #expect(try metrics.expectCounter("runloop_passes_total", main).values == [1, 1, 1])
        #expect(factory.values("runloop_asleep_seconds_total") == [1, 1, 1])
    }

    @Test("the callout label is opt-in: without it the longest callout's gauge has only loop and kind")
    func calloutLabelOff() throws {
        let (_, loop) = timedRun()
        let metrics = TestMetrics()
        EVRunLoopMetricsReporter(loop: loop, label: "main", factory: metrics).report()
        #expect(try metrics.expectGauge("runloop_longest_callout_seconds", main + [("kind", "timer")]).lastValue == 0.002)
        #expect(metrics.recorders.allSatisfy { !$0.dimensions.contains { $0.0 == "callout" } })
    }

    @Test("callout labels past the cap read other: the gauge's series stay bounded")
    func calloutLabelCap() throws {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        let metrics = TestMetrics()
        let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main", calloutLabels: 2, factory: metrics)
        // Each report's longest callout is a new label, each longer than the last; each
        // report replaces the gauge of the one before.
        var named: [String] = []
        for index in 1...4 {
            loop.perform(label: "job \(index)") { clock.advance(by: .milliseconds(index)) }
            loop.run(mode: .default, for: .zero)
            reporter.report()
            let gauges = metrics.recorders(label: "runloop_longest_callout_seconds")
            #expect(gauges.count == 1)
            named += gauges.compactMap { gauge in gauge.dimensions.first { $0.0 == "callout" }?.1 }
        }
        #expect(named == ["job 1", "job 2", "other", "other"])
    }
}

/// Issue 35, item 8: a report taken while the loop resets its metrics on its own thread.
@Suite("Real time: RunLoopKitMetrics reporting a loop that resets its metrics")
struct ReporterResetTests {
    @Test("reports made while the loop resets never increment a counter by a negative amount")
    func noNegativeIncrements() async throws {
        let made = Mutex<EVRunLoop?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let stopping = Atomic<Bool>(false)
        Thread.detachNewThread {
            let loop = EVRunLoop.current
            loop.recordsMetrics = true
            let count = Mutex(0)
            let spin = EVSource(label: "spin") { source in
                let resets = count.withLock { count in
                    count += 1
                    return count % 300 == 0
                }
                if resets { loop.resetMetrics() }
                if stopping.load(ordering: .relaxed) { loop.stop() } else { source.signal() }
            }
            loop.add(spin, forMode: .default)
            spin.signal()
            made.withLock { $0 = loop }
            ready.signal()
            loop.run(mode: .default, for: .seconds(120))
            spin.invalidate()
            done.signal()
        }
        ready.wait()
        let loop = try #require(made.withLock { $0 })
        let metrics = TestMetrics()
        let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main", samplesPerReport: 1, factory: metrics)
        // The reports are made on a thread of their own, not on the test's thread of the
        // cooperative pool: they go on until the 300th reset, long on a loaded machine.
        let reports = await withCheckedContinuation { (finished: CheckedContinuation<Int, Never>) in
            Thread.detachNewThread {
                let deadline = ContinuousClock.now + .seconds(20)
                var reports = 0
                while loop.metrics.resets < 300 && ContinuousClock.now < deadline {
                    reporter.report()
                    reports += 1
                }
                finished.resume(returning: reports)
            }
        }
        stopping.store(true, ordering: .relaxed)
        done.wait()
        let resets = loop.metrics.resets
        #expect(resets >= 300, "the loop reset its metrics \(resets) times in 20 s")
        let negative = metrics.counters.flatMap(\.values).filter { $0 < 0 }
        #expect(negative.isEmpty, "\(negative.count) negative increments in \(reports) reports: \(negative.prefix(5))")
    }
}
#endif
