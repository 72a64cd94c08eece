import RunLoopKit
#if Metrics
import RunLoopKitMetrics
#endif
import Testing

// The loop health metrics: TestingOnVirtualTime.md's section and the doc comment of
// EVRunLoopMetricsReporter (Sources/RunLoopKitMetrics).
@Suite struct MetricsSnippets {
    #if Metrics
    /// Compiled, not run: it reports on the thread's real loop.
    static func reporterExample() {
        // snippet: metrics-reporter-doc
        let loop = EVRunLoop.current
        loop.recordsMetrics = true
        let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main")
        reporter.start(every: .seconds(10))  // or call reporter.report() yourself, from any thread
        // end
    }
    #endif

    @Test func metricsOnVirtualTime() {
        // snippet: metrics-virtual-time
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "save") { _ in
            clock.advance(by: .milliseconds(3))  // a callout that takes 3 ms
        }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))

        let metrics = loop.metrics  // any thread may read it
        #expect(metrics.asleep == .milliseconds(10))
        #expect(metrics.busy == .milliseconds(3))
        #expect(metrics.wakes == [.deadline: 1])
        #expect(metrics.callouts[.timer]?.percentile(0.99) == .milliseconds(3))
        #expect(metrics.lateness.max == .zero)
        #expect(metrics.longestCallout?.label == "save")
        // end
    }
}
