import ExampleTesting
import Foundation
import Stopwatch
import Testing

/// Runs the real `stopwatch` binary for about two seconds and checks its JSON summary.
/// Bounds are generous: this checks behaviour, not speed.
@Suite("Real time: stopwatch end to end", .serialized) struct EndToEndTests {
    private func binary() throws -> URL {
        try #require(ExampleProcess.binary(named: "stopwatch"),
                     "stopwatch not found in \(ExampleProcess.productsDirectory.path); build it first")
    }

    @Test func runPrintsOneJSONSummary() throws {
        let arguments = ["--duration", "2", "--json", "--locale", "de_DE", "--at", "1:lap", "--stall", "30"]
        let result = try ExampleProcess.run(try binary(), arguments)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 1)
        let summary = try JSONDecoder().decode(StopwatchSummary.self, from: Data(result.stdout.utf8))
        #expect(summary.decimalSeparator == ",")
        #expect(summary.shown.contains(","))
        #expect(summary.laps.count == 1)
        #expect(summary.runningSeconds > 1.5 && summary.runningSeconds < 20)  // 10x: a loaded machine fires its end late
        #expect(abs(summary.computedDriftSeconds) < 0.001)
        #expect(summary.frames > 0)
        #expect(summary.stalls >= 1)
    }

    @Test func interruptEndsTheRunAndStillPrintsTheSummary() throws {
        let result = try ExampleProcess.run(try binary(), ["--json"], interruptAfter: 1.5)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = try JSONDecoder().decode(StopwatchSummary.self, from: Data(result.stdout.utf8))
        #expect(summary.duration > 1 && summary.duration < 30)
    }

    @Test func plainOutputWhenNotATerminal() throws {
        let result = try ExampleProcess.run(try binary(), ["--duration", "1.2", "--locale", "en_US"])
        #expect(result.status == 0)
        #expect(!result.stdout.contains("\u{1B}["))
        #expect(result.stdout.contains("00:01."))
        #expect(result.stdout.hasPrefix("start  00:00.00"), "the display before the first frame")
        #expect(result.stdout.contains("computed from start instant"))
    }
}
