import ExampleSupport
import Foundation
import RunLoopKit
import Testing

/// The loop's figures the examples print after `--json` (ExampleSupport's LoopMetricsReport).
@Suite("The examples' metrics report, on the virtual clock")
struct MetricsReportTests {
    @Test("busy per cent, wakes per second and why, percentiles in ms, the longest callout")
    func report() throws {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        let timer = EVTimer(interval: .milliseconds(100), repeats: true, label: "tick") { _ in
            clock.advance(by: .milliseconds(10))  // 10 ms of work per tick
        }
        loop.add(timer, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        timer.invalidate()

        let report = LoopMetricsReport(loop.metrics)
        // Ticks at 0.1 … 1.0 s, each 10 ms; the run ends after the last: 1.01 s inside it.
        func close(_ value: Double?, _ expected: Double) -> Bool { value.map { abs($0 - expected) < 1e-9 } ?? false }
        #expect(close(report.busyPercent, 100 * 0.1 / 1.01))
        #expect(close(report.wakesPerSecond, 10 / 1.01))
        #expect(Array(report.wakesPerSecondByReason.keys) == ["deadline"])
        #expect(close(report.wakesPerSecondByReason["deadline"], 10 / 1.01))
        #expect(report.callouts == 10)
        #expect(close(report.calloutP50Ms, 10))  // the bucket's upper end, capped at the largest
        #expect(close(report.calloutP99Ms, 10))
        #expect(report.latenessP50Ms == 0)  // every tick on time
        #expect(report.latenessP99Ms == 0)
        #expect(report.longestCallout == "tick (timer)")
        #expect(close(report.longestCalloutMs, 10))
    }

    @Test("the summary's keys and `metrics` in one JSON object, snake_case when asked")
    func encoded() throws {
        struct Summary: Codable { var updateCount = 3 }
        let line = try SummaryJSON.encode(Summary(), metrics: EVRunLoop.Metrics(), snakeCaseKeys: true)
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["update_count"] as? Int == 3)
        let metrics = try #require(object["metrics"] as? [String: Any])
        #expect(metrics["busy_percent"] as? Double == 0)
        #expect(metrics["passes"] as? Int == 0)
    }
}
