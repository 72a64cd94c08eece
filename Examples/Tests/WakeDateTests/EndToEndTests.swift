import ExampleTesting
import Foundation
import Testing
import WakeDate

/// Runs the real `wake-date` binary for about two seconds and checks its JSON summary.
/// Bounds are generous: this checks behaviour, not speed.
@Suite("Real time: wake-date end to end", .serialized) struct EndToEndTests {
    private func binary() throws -> URL {
        try #require(ExampleProcess.binary(named: "wake-date"),
                     "wake-date not found in \(ExampleProcess.productsDirectory.path); build it first")
    }

    @Test func runPrintsOneJSONSummary() throws {
        let result = try ExampleProcess.run(try binary(), ["--duration", "2.5", "--json", "--slow", "30"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 1)
        let summary = try JSONDecoder().decode(WakeDateSummary.self, from: Data(result.stdout.utf8))
        #expect(summary.passes >= 1 && summary.passes <= 3)
        #expect(summary.everyPassWasOneWake)
        #expect(summary.wakeDateSpreadMaxMicroseconds == 0)
        #expect(summary.observedSpreadMaxMicroseconds == 0)
        #expect(summary.registeredModes.first == "kCFRunLoopDefaultMode")
        if summary.slowPasses > 0 {
            #expect(summary.staleAfterSlowMedianMilliseconds >= 30)
            #expect(summary.staleAfterSlowMedianMilliseconds < 1_000)
        }
    }

    @Test func interruptEndsTheRunAndStillPrintsTheSummary() throws {
        let result = try ExampleProcess.run(try binary(), ["--json"], interruptAfter: 1.5)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = try JSONDecoder().decode(WakeDateSummary.self, from: Data(result.stdout.utf8))
        #expect(summary.passes >= 0 && summary.passes <= 20)
    }

    @Test func plainOutputWhenNotATerminal() throws {
        let result = try ExampleProcess.run(try binary(), ["--duration", "1.5"])
        #expect(result.status == 0)
        #expect(!result.stdout.contains("\u{1B}["))
        #expect(result.stdout.contains("pass 0 (plain)"))
        #expect(result.stdout.contains("lazy registration"))
    }
}
