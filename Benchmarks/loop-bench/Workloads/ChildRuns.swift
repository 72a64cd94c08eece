/// What the workloads measured in child processes of their own share: one child's figures,
/// variants interleaved over the repetitions, and a child's latency report.
enum ChildRuns {
    /// Runs one `workload` child with `arguments` and returns the numbers it printed on its
    /// line; stops the benchmark when it printed none (or not `expected` of them).
    static func figures(_ workload: String, _ arguments: [String], expected: Int? = nil) -> [Double] {
        let output = Children.run(workload) { _ in arguments }[0]
        let figures = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard !figures.isEmpty, expected.map({ $0 == figures.count }) ?? true else {
            fatalError("loop-bench: a \(workload) child for \(arguments) printed \(output.debugDescription)")
        }
        return figures
    }

    /// One child per key with `arguments(key)`, the keys interleaved, `repetitions` times:
    /// each key's figures, one list per repetition.
    static func interleaved<Key: Hashable>(_ workload: String, repetitions: Int, _ keys: [Key],
                                           _ arguments: (Key) -> [String]) -> [Key: [[Double]]] {
        var figures: [Key: [[Double]]] = [:]
        for _ in 0..<repetitions {
            for key in keys { figures[key, default: []].append(self.figures(workload, arguments(key))) }
        }
        return figures
    }

    /// In a child: runs `measure(20)` untimed (it warms the process), then prints the median
    /// and p99 (µs) of the latencies (ns) of `measure(count)`.
    static func reportLatencies(count: Int, _ measure: (Int) -> [Double]) {
        _ = measure(20)
        let summary = Summary(measure(count))
        Pairs.report([summary.median / 1e3, summary.percentile(99) / 1e3])
    }

    /// Every peer but RunLoopKit, each with `reason`: the other cells of a RunLoopKit-only row.
    static func runLoopKitOnly(_ reason: String) -> [Peer: String] {
        Dictionary(uniqueKeysWithValues: Peer.others.map { ($0, reason) })
    }
}
