import Synchronization

/// What the charts are drawn from, collected by the workloads as they measure: points of a
/// peer's series (x, y), and samples of a peer's distribution.
final class ChartData: Sendable {
    /// The one collection of a run.
    static let shared = ChartData()

    /// A point of a series.
    typealias Point = (x: Double, y: Double)

    private let series = Mutex<[String: [Peer: [Point]]]>([:])
    private let samples = Mutex<[String: [Peer: [Double]]]>([:])

    /// Adds a point to `peer`'s series in chart `chart`.
    func add(_ chart: String, _ peer: Peer, x: Double, y: Double) {
        series.withLock { $0[chart, default: [:]][peer, default: []].append((x: x, y: y)) }
    }

    /// Replaces `peer`'s samples in distribution chart `chart` (the last repetition's).
    func setSamples(_ chart: String, _ peer: Peer, _ values: [Double]) {
        samples.withLock { $0[chart, default: [:]][peer] = values }
    }

    func series(_ chart: String) -> [Peer: [Point]] { series.withLock { $0[chart] ?? [:] } }
    func samples(_ chart: String) -> [Peer: [Double]] { samples.withLock { $0[chart] ?? [:] } }
}
