import CoreMetrics
import Glibc
import Prometheus
import RunLoopKit
import RunLoopKitMetrics

// Exports a loop's health metrics through swift-prometheus and prints the text exposition
// a Prometheus server scrapes from `/metrics`: the loop runs a 20 ms timer for 0.3 s, its
// reporter sends what the loop recorded, and the registry writes it out. The names follow
// Prometheus's conventions: seconds, `_total` counters, and the callout label opted into
// with a cap, so that free-text labels cannot make the series unbounded.

if CommandLine.arguments.dropFirst().contains(where: { $0 == "-h" || $0 == "--help" }) {
    print("""
        OVERVIEW: Runs a loop for 0.3 s and prints its metrics in Prometheus's text format.

        USAGE: prometheus-metrics

        OPTIONS:
          -h, --help  Show help information.
        """)
    exit(0)
}

// snippet: prometheus-export
let registry = PrometheusCollectorRegistry()
var factory = PrometheusMetricsFactory(registry: registry)
// Callouts take microseconds: buckets finer than the default 5 ms to 10 s.
factory.defaultDurationHistogramBuckets = [
    .microseconds(10), .microseconds(100), .milliseconds(1), .milliseconds(10), .milliseconds(100), .seconds(1),
]
MetricsSystem.bootstrap(factory)

let loop = EVRunLoop.current
loop.recordsMetrics = true
// The longest callout's gauge names at most 4 distinct callout labels; the rest read "other".
let reporter = EVRunLoopMetricsReporter(loop: loop, label: "main", calloutLabels: 4)
loop.add(EVTimer(interval: .milliseconds(20), repeats: true, label: "tick") { _ in }, forMode: .default)
loop.run(mode: .default, for: .milliseconds(300))
reporter.report()  // or reporter.start(every: .seconds(10)) on a loop that keeps running

print(registry.emitToString(), terminator: "")  // what GET /metrics would answer
// end
