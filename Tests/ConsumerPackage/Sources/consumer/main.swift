import CGLib
import CLibev
import ExampleSupport
import RunLoopKit
import RunLoopKitExperimental
import RunLoopKitGLib
import RunLoopKitMetrics
import RunLoopKitSVGPlot
import RunLoopKitServiceLifecycle
import RunLoopKitSystem
import RunLoopKitTraceTimeline
import SVGPlot
import SystemPackage
import TestSupport
import TraceTimeline

// Each RunLoopKit product and each of the consumer's modules, used once (RunLoopKitExperimental
// only imported: its API is the executors' SPI).
let loop = EVRunLoop.current
let trace = EVRunLoop.Trace()
loop.trace = trace
loop.recordsMetrics = true
loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "once") { _ in }, forMode: .default)
let glib = loop.host(in: [.default])  // GLib's default context, in the default mode
loop.run(mode: .default, for: .milliseconds(100))
glib.unhost()
EVRunLoopMetricsReporter(loop: loop, label: "consumer").report()
let pipeEnds = try FileDescriptor.pipe()
let readable = try EVSource(fileDescriptor: pipeEnds.readEnd) { _ in }
print("descriptor source: \(readable.kind.fileDescriptor == pipeEnds.readEnd.rawValue)")
let service = EVRunLoopService(name: "consumer-service")
service.loop.syncShutdown()  // as the service's run() would at a graceful shutdown
let timeline = TraceTimeline(title: "consumer", trace: trace).svg()
let figure = Figure(title: "consumer", charts: []).svg()
print("timer fired: \(trace.lines.contains("timer(once)")); GLib's clock: \(g_get_monotonic_time() > 0)")
print("C: \(clibev_consumer_answer()); SVG: \(timeline.count) and \(figure.count) bytes")
print([TestSupportName.name, SVGPlotName.name, TraceTimelineName.name, ExampleSupportName.name].joined(separator: " "))
