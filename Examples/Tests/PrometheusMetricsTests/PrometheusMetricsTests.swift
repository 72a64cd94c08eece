import ExampleTesting
import Testing

/// Examples/prometheus-metrics: a loop's metrics exported through swift-prometheus, read
/// back from the text exposition the example prints.
@Suite("Real time: a loop's metrics in Prometheus's text format") struct PrometheusMetricsTests {
    /// The exposition's samples: `name{labels}` to value.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test func theExportedTextFollowsPrometheusConventions() throws {
        let result = try ExampleProcess.run(example: "prometheus-metrics", [], timeLimit: 60)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let text = result.stdout
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ") }
        let counters = types.filter { $0.last == "counter" }.map { String($0[2]) }
        #expect(Set(counters) == ["runloop_passes_total", "runloop_wakes_total", "runloop_callouts_total",
                                  "runloop_busy_seconds_total", "runloop_asleep_seconds_total"], "\(text)")
        #expect(types.contains { $0[2] == "runloop_callout_duration_seconds" && $0.last == "histogram" }, "\(text)")
        #expect(types.contains { $0[2] == "runloop_timer_lateness_seconds" && $0.last == "histogram" }, "\(text)")
        #expect(!text.contains("nanoseconds"))

        let samples = Self.samples(text)
        // A 20 ms timer for 0.3 s: about 15 fires (a loaded machine skips some, never bunches).
        let fires = try #require(samples[#"runloop_callouts_total{loop="main",kind="timer"}"#], "\(text)")
        #expect((1...16).contains(fires))
        let asleep = try #require(samples[#"runloop_asleep_seconds_total{loop="main"}"#], "\(text)")
        #expect(asleep > 0 && asleep < 30, "seconds, not nanoseconds")
        let busy = try #require(samples[#"runloop_busy_seconds_total{loop="main"}"#], "\(text)")
        #expect(busy > 0 && busy < 30)
        #expect(samples[#"runloop_callout_duration_seconds_count{loop="main",kind="timer"}"#] == fires)
        // The callout label, opted into: the timer's own label.
        let longest = try #require(samples[#"runloop_longest_callout_seconds{loop="main",kind="timer",callout="tick"}"#],
                                   "\(text)")
        #expect(longest > 0 && longest < 30)
    }
}
