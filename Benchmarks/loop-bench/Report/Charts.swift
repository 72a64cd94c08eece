import Foundation
import RunLoopKitSVGPlot

/// The charts `--write` draws next to the report, from what the workloads collected in
/// ``ChartData``: CPU per fire against N, wakes/s at tolerance 0 and 0.1 s, and lateness
/// percentiles, as ``LineChart``s; the machine's wakes in RunLoopKitSVGPlot's two panels.
enum Charts {
    /// One chart: its file name's suffix, its caption in the report, and its SVG.
    typealias Chart = (slug: String, caption: String, svg: String)

    static func all(data: ChartData) -> [Chart] {
        var charts: [Chart] = []
        let cpu = data.series("cpu-per-fire")
        if !cpu.isEmpty {
            let series = Peer.allCases.compactMap { peer in
                cpu[peer].map { LineChart.Series(name: peer.rawValue, points: $0.map { ($0.x, $0.y) }) }
            }
            let chart = LineChart(title: "CPU per timer fire against N (1 ms timers)", xLabel: "N timers",
                                  yLabel: "CPU ns per fire (process)", logX: true, logY: true, series: series)
            charts.append((slug: "cpu-per-fire", caption: "CPU per fire against N, every peer (log–log)", svg: chart.render()))
        }
        let wakes = data.series("wakes")
        if !wakes.isEmpty {
            let peers = Peer.allCases.filter { wakes[$0] != nil }
            let series = [0.0, 0.1].map { tolerance in
                LineChart.Series(name: tolerance == 0 ? "tolerance 0" : "tolerance 0.1 s", points: peers.enumerated().compactMap { g, peer in
                    wakes[peer]?.first { $0.x == tolerance }.map { (Double(g), $0.y) }
                })
            }
            let chart = LineChart(title: "Wakes per second: 1,000 timers every 0.2 s", xLabel: "peer",
                                  yLabel: "voluntary context switches/s (log)", logY: true, categories: peers.map(\.rawValue),
                                  series: series)
            charts.append((slug: "wakes", caption: "Wakes/s at tolerance 0 and 0.1 s, per peer (log scale)", svg: chart.render()))
        }
        for (name, slug) in [("lateness tolerance 0", "lateness-tolerance-0"),
                             ("lateness tolerance 0.1 s", "lateness-tolerance-0.1"),
                             ("lateness 10 ms timer", "lateness-precision")] {
            let samples = data.samples(name)
            guard !samples.isEmpty else { continue }
            let series = Peer.allCases.compactMap { peer -> LineChart.Series? in
                guard let values = samples[peer], !values.isEmpty else { return nil }
                // Fires up to 1 ms early show as negative lateness; a log axis starts at 1 µs.
                let s = Summary(values.map { Swift.max($0, 1) })
                let figures = [s.percentile(5), s.percentile(25), s.median, s.percentile(75), s.percentile(95), s.max]
                return LineChart.Series(name: peer.rawValue, points: figures.enumerated().map { (Double($0), $1) })
            }
            let title = name == "lateness 10 ms timer"
                ? "Lateness of a 10 ms repeating timer"
                : "Lateness: 1,000 timers every 0.2 s, \(name.replacingOccurrences(of: "lateness ", with: ""))"
            let chart = LineChart(title: title, xLabel: "percentile of the fires' lateness",
                                  yLabel: "µs after the scheduled fire (log; ≤ 1 µs drawn at 1)", logY: true,
                                  categories: ["p5", "p25", "median", "p75", "p95", "max"], series: series)
            charts.append((slug: slug, caption: title + " (one repetition per peer)", svg: chart.render()))
        }
        if let machine = machineChart(data) { charts.append(machine) }
        return charts
    }

    /// The machine's wakes against the number of processes (a line chart drawn with
    /// RunLoopKitSVGPlot; Dispatch left out: ~1,000 wakes/s would flatten the other lines).
    private static func machineChart(_ data: ChartData) -> Chart? {
        let modes: [MachineCoalescing.Mode] = [.sharedGrid, .perLoop, .libev]
        func chart(_ key: String, _ title: String) -> RunLoopKitSVGPlot.Chart {
            let series = modes.compactMap { mode -> RunLoopKitSVGPlot.Chart.Series? in
                guard let points = data.series("\(key)/\(mode.rawValue)")[mode.peer], !points.isEmpty else { return nil }
                // Repetitions of one P: their mean.
                let byP = Dictionary(grouping: points, by: \.x).map { x, list in
                    RunLoopKitSVGPlot.Chart.Point(x: x, y: list.map(\.y).reduce(0, +) / Double(list.count))
                }
                return RunLoopKitSVGPlot.Chart.Series(label: mode.label, points: byP.sorted { $0.x < $1.x })
            }
            return RunLoopKitSVGPlot.Chart(title: title, xLabel: "processes P", yLabel: "wakes/s, whole machine", series: series)
        }
        let instants = chart("machine-instants", "Distinct wake instants/s (1 ms)")
        let clusters = chart("machine-clusters", "Wake clusters/s (5 ms)")
        guard !instants.series.isEmpty else { return nil }
        let figure = Figure(title: "P processes × 1,000 timers of 0.2 s, tolerance 0.1 s", charts: [instants, clusters])
        return (slug: "machine-wakes", caption: "The machine's wakes against the number of processes (Dispatch: see the table)",
                     svg: figure.svg())
    }

    /// `BENCHMARKS-<slug>.svg` in the report's folder.
    static func path(of chart: Chart, nextTo report: String) -> String {
        URL(fileURLWithPath: report).deletingPathExtension().path + "-\(chart.slug).svg"
    }
}
