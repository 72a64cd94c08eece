import Foundation
import RunLoopKitSVGPlot
import Testing

@Suite struct FigureTests {
    @Test("a figure has one labelled polyline per series, in every chart, and escapes its text")
    func seriesAndLabels() throws {
        let figure = Figure(title: "a < b & c", charts: [
            Chart(title: "left", xLabel: "time (s)", yLabel: "error (ms)", series: [
                Chart.Series(label: "naive", points: [Chart.Point(x: 0, y: 500), Chart.Point(x: 1, y: 480)]),
                Chart.Series(label: "aligned", points: [Chart.Point(x: 0, y: 0.02), Chart.Point(x: 1, y: 0.03)]),
            ]),
            Chart(title: "right", xLabel: "time (s)", yLabel: "wakeups/s", series: [
                Chart.Series(label: "polling", points: [Chart.Point(x: 0, y: 10), Chart.Point(x: 1, y: .nan)]),
            ]),
        ])
        let svg = figure.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 3)
        for label in [">naive<", ">aligned<", ">polling<", ">left<", ">right<", ">error (ms)<", ">wakeups/s<"] {
            #expect(svg.contains(label), "\(label) missing")
        }
        #expect(svg.contains("a &lt; b &amp; c"))
        #expect(!svg.contains("nan"))
    }

    @Test("the vertical axis starts at zero and its ticks are round")
    func roundTicks() {
        let svg = Figure(title: "t", charts: [
            Chart(title: "c", xLabel: "x", yLabel: "y", series: [
                Chart.Series(label: "s", points: [Chart.Point(x: 0, y: 3), Chart.Point(x: 10, y: 87)]),
            ]),
        ]).svg()
        for tick in [">0<", ">20<", ">40<", ">60<", ">80<", ">100<"] {
            #expect(svg.contains(tick), "\(tick) missing")
        }
    }

    @Test func writesAFile() throws {
        let path = NSTemporaryDirectory() + "phase.svg"
        defer { try? FileManager.default.removeItem(atPath: path) }
        // snippet: figure-doc
        let figure = Figure(title: "Phase error", charts: [
            Chart(title: "aligned", xLabel: "time (s)", yLabel: "error (ms)", series: [
                Chart.Series(label: "aligned", points: [Chart.Point(x: 0, y: 0.02), Chart.Point(x: 1, y: 0.03)]),
            ]),
        ])
        try figure.write(toFile: NSTemporaryDirectory() + "phase.svg")
        // end
        #expect(try String(contentsOfFile: path, encoding: .utf8) == figure.svg())
    }
}
