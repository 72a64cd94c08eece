import ArgumentParser
import ExampleSupport
import Foundation
import Glibc
import RunLoopKit
import WakeDate

/// `wake-date`: one consistent "now" per run-loop pass (scenario S2), the Q&A answer's
/// observer next to RunLoopKit's built-in `wakeDate`.
@main
struct WakeDateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wake-date",
        abstract: "One consistent \"now\" per run-loop pass: an observer-based wakeDate next to the built-in one.",
        discussion: """
            Every second, several timers fire in the same pass and queue a block; each reads \
            Date(), the Q&A answer's observer-based wake date (an entry/afterWaiting observer \
            of order -2,000,000, added lazily to each mode the loop runs) and \
            EVRunLoop.wakeDate. Date() differs between callouts; both wake dates are the same \
            throughout the pass and equal to each other. In every other pass the second timer \
            takes --slow milliseconds, which makes the wake date seen after it stale by that \
            much. Every third pass the block runs a nested run in a second mode, where the \
            observer registers itself. Ctrl-C ends the run and still prints the summary.
            """)

    @Option(help: "Seconds to run (default: until Ctrl-C).")
    var duration: Double?

    @Flag(help: "Print only the summary, as one JSON object on stdout.")
    var json = false

    @Option(name: .customLong("trace-svg"), help: ArgumentHelp(TraceSVG.help, valueName: "file"))
    var traceSVG: String?

    @Option(help: "Timers due in the same pass, at least 2.")
    var timers = 3

    @Option(help: "Milliseconds the second timer's callout takes, every other pass; 0 turns it off.")
    var slow: Double = 25

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a number of seconds greater than zero, not \(duration)")
        }
        guard timers >= 2 && timers <= 100 else {
            throw ValidationError("--timers must be in 2...100, not \(timers)")
        }
        guard slow.isFinite, slow >= 0, slow < 900 else {
            throw ValidationError("--slow must be in [0, 900) milliseconds, not \(slow)")
        }
    }

    func run() throws {
        // A synchronous main on the main thread: the main actor's code runs here, on
        // EVRunLoop.main, which also services the main queue (so the main actor's tasks run).
        try MainActor.assumeIsolated { try runOnMainActor() }
    }

    @MainActor
    private func runOnMainActor() throws {
        let loop = EVRunLoop.main
        loop.recordsMetrics = json
        let timeline = TraceSVG(recording: loop, to: traceSVG, title: "wake-date")
        let session = WakeDateSession(loop: loop, configuration: WakeDateConfiguration(timers: timers, slowMilliseconds: slow))
        if !json {
            let screen = WakeDateScreen(redraws: isatty(STDOUT_FILENO) == 1)
            session.onPass = { pass, _ in Output.write(screen.text(for: pass)) }
        }
        let interrupts = InterruptSignals.sources { loop.stop() }
        for source in interrupts { loop.add(source, forMode: .default) }

        session.start()
        loop.runDefaultMode(forSeconds: duration)
        for source in interrupts { source.invalidate() }

        let summary = session.finish()
        try timeline?.write()
        Output.write(json ? try SummaryJSON.encode(summary, metrics: loop.metrics) + "\n" : "\n" + summary.table() + "\n")
    }
}
