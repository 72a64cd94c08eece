// Built with the package trait "Metrics" only (make test enables it).
#if Metrics
import CoreMetrics
import MetricsTestKit
import Synchronization

/// swift-metrics' `TestMetrics`, plus the floating-point counters it lacks (it would round
/// them to whole units): each increment kept as sent, by label.
final class SecondsCounters: MetricsFactory {
    let test = TestMetrics()
    private let increments = Mutex<[String: [Double]]>([:])

    /// What the floating-point counter `label` (with any dimensions) was incremented by.
    func values(_ label: String) -> [Double] { increments.withLock { $0[label] ?? [] } }

    final class Handler: FloatingPointCounterHandler {
        let record: @Sendable (Double) -> Void
        init(record: @escaping @Sendable (Double) -> Void) { self.record = record }
        func increment(by amount: Double) { record(amount) }
        func reset() {}
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        Handler { amount in self.increments.withLock { $0[label, default: []].append(amount) } }
    }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        test.makeCounter(label: label, dimensions: dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        test.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        test.makeMeter(label: label, dimensions: dimensions)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        test.makeTimer(label: label, dimensions: dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) { test.destroyCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { test.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { test.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { test.destroyTimer(handler) }
}
#endif
