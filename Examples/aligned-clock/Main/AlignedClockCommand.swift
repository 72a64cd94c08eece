import AlignedClock
import ArgumentParser
import ExampleSupport
import Foundation
import Glibc
import RunLoopKit

/// `aligned-clock`: a clock that ticks on whole seconds (scenario S0), measured against a
/// naive 1 s timer and 0.1 s polling.
@main
struct AlignedClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aligned-clock",
        abstract: "A clock that ticks on whole seconds, with the phase error of each tick measured.",
        discussion: """
            Shows HH:MM:SS driven by a wall-clock aligned 1 s timer (EVTimer(alignedTo: 1)) and \
            prints each tick's sub-second phase with the running mean and spread. With --compare, \
            a naive 1 s timer started at an arbitrary moment and 0.1 s polling run in the same \
            loop. The summary reports, per strategy, the phase error (median, p99), the lag of \
            the displayed second and the wakeups per second. Ctrl-C ends the run and still \
            prints the summary.
            """)

    @Option(help: "Seconds to run (default: until Ctrl-C).")
    var duration: Double?

    @Flag(help: "Print only the summary, as one JSON object on stdout.")
    var json = false

    @Flag(help: "Run the naive 1 s timer, 0.1 s polling and the aligned timer side by side.")
    var compare = false

    @Option(help: "Seconds of simulated work to publish each tick of the aligned clock, below 0.5.")
    var publishCost: Double = 0

    @Option(
        help: "Fire early so the published value lands on the second: 'auto' (measured) or seconds.",
        transform: { argument in
            guard let lead = LeadSetting(argument: argument) else {
                throw ValidationError("--lead takes 'auto' or seconds in [0, 1), not '\(argument)'")
            }
            return lead
        })
    var lead: LeadSetting?

    @Option(help: "Write each strategy's display lag over time to this SVG file.")
    var plot: String?

    @Option(name: .customLong("trace-svg"), help: ArgumentHelp(TraceSVG.help, valueName: "file"))
    var traceSVG: String?

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a number of seconds greater than zero, not \(duration)")
        }
        guard publishCost.isFinite, publishCost >= 0, publishCost < 0.5 else {
            throw ValidationError("--publish-cost must be in [0, 0.5) seconds, not \(publishCost)")
        }
    }

    func run() throws {
        let loop = EVRunLoop.current
        loop.recordsMetrics = json
        let timeline = TraceSVG(recording: loop, to: traceSVG, title: "aligned-clock")
        let configuration = ClockConfiguration(
            compare: compare, publishCost: publishCost, lead: lead ?? .none,
            naiveStartDelay: Double.random(in: 0.1..<0.9))
        let session = ClockSession(loop: loop, configuration: configuration)
        if !json {
            let screen = ClockScreen(strategies: configuration.strategies, redraws: isatty(STDOUT_FILENO) == 1)
            session.onUpdate = { update, session in
                Output.write(screen.text(for: update, tickPhases: session.alignedTickPhases))
            }
        }
        let interrupts = InterruptSignals.sources { loop.stop() }
        for source in interrupts { loop.add(source, forMode: .default) }

        let start = loop.wallNow
        session.start()
        loop.runDefaultMode(forSeconds: duration)
        for source in interrupts { source.invalidate() }

        let updates = session.updates
        let summary = session.finish()
        if let plot {
            try ClockPlot.figure(updates: updates, strategies: configuration.strategies, start: start).write(toFile: plot)
        }
        try timeline?.write()
        Output.write(json ? try SummaryJSON.encode(summary, metrics: loop.metrics) + "\n" : "\n" + summary.table() + "\n")
    }
}
