import AlignedClock
import ExampleTesting
import Foundation
import Testing

/// Runs the real `aligned-clock` binary for about two seconds and checks its JSON summary.
/// Bounds are generous: this checks behaviour, not speed.
@Suite("Real time: aligned-clock end to end", .serialized) struct EndToEndTests {
    private func binary() throws -> URL {
        try #require(ExampleProcess.binary(named: "aligned-clock"),
                     "aligned-clock not found in \(ExampleProcess.productsDirectory.path); build it first")
    }

    @Test func compareRunPrintsOneJSONSummary() throws {
        let result = try ExampleProcess.run(try binary(), ["--compare", "--duration", "2.2", "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let summary = try JSONDecoder().decode(ClockSummary.self, from: Data(result.stdout.utf8))
        #expect(summary.strategies.map(\.strategy) == [.naive, .polling, .aligned])
        #expect(summary.duration > 2 && summary.duration < 20)  // 10x the run: a loaded machine fires its end late
        let aligned = try #require(summary.report(for: .aligned))
        #expect(aligned.updates >= 1 && aligned.updates <= 3)
        #expect(aligned.phaseErrorMedianMs >= 0 && aligned.phaseErrorMedianMs < 100)
        #expect(aligned.wakeupsPerSecond < 2)
        let polling = try #require(summary.report(for: .polling))
        #expect(polling.wakeupsPerSecond > 3 && polling.wakeupsPerSecond <= 11)
        // The loop's own figures, after the summary's.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let metrics = try #require(object["metrics"] as? [String: Any])
        let busy = try #require(metrics["busyPercent"] as? Double)
        #expect(busy >= 0 && busy <= 100)
        let wakes = try #require(metrics["wakesPerSecond"] as? Double)
        #expect(wakes > 3 && wakes < 100)  // the polling timer's ten a second, and the others'
        #expect((metrics["wakesPerSecondByReason"] as? [String: Double])?["deadline"] != nil)
        #expect(metrics["calloutP99Ms"] as? Double != nil && metrics["latenessP99Ms"] as? Double != nil)
    }

    @Test func interruptEndsTheRunAndStillPrintsTheSummary() throws {
        let result = try ExampleProcess.run(try binary(), ["--json"], interruptAfter: 1.5)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = try JSONDecoder().decode(ClockSummary.self, from: Data(result.stdout.utf8))
        #expect(summary.duration > 1 && summary.duration < 30)
        #expect(summary.strategies.map(\.strategy) == [.aligned])
    }

    @Test func plainOutputWhenNotATerminal() throws {
        let result = try ExampleProcess.run(try binary(), ["--duration", "1.5"])
        #expect(result.status == 0)
        #expect(!result.stdout.contains("\u{1B}["))
        #expect(result.stdout.contains("aligned 1 s timer"))
        #expect(result.stdout.contains("phase error ms"))
    }

    @Test func badArgumentsAreRejected() throws {
        let result = try ExampleProcess.run(try binary(), ["--lead", "soon"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--lead"))
    }
}
