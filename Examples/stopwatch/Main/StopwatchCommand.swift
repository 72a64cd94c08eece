import ArgumentParser
import ExampleSupport
import Foundation
import Glibc
import RunLoopKit
import Stopwatch

/// `stopwatch`: mm:ss.hh updated 100 times per second, computed from a monotonic start
/// instant (scenario S1), next to the write-up's counting approach.
@main
struct StopwatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stopwatch",
        abstract: "A 100 Hz mm:ss.hh stopwatch that neither drifts nor jitters.",
        discussion: """
            The shown time is always computed from the instant the stopwatch started, on the \
            monotonic clock; next to it runs the write-up's approach, which adds 0.01 s per \
            update. The summary compares both with the wall-clock time the stopwatch ran, and \
            reports the updates that arrived and what 100 Hz cost (a frame timer, paused while \
            stopped). Keys on a terminal: space start/stop, l lap, r reset, q quit. Without a \
            terminal (or with --start) the stopwatch starts at once; --at schedules actions.
            """)

    @Option(help: "Seconds to run (default: until q or Ctrl-C).")
    var duration: Double?

    @Flag(help: "Print only the summary, as one JSON object on stdout.")
    var json = false

    @Option(help: "The locale of the decimal separator, for example de_DE (default: the system's).")
    var locale: String?

    @Flag(help: "Start timing at once (the default when stdin is not a terminal).")
    var start = false

    @Option(
        name: .customLong("at"),
        help: "Perform an action at a time: <seconds>:<start|stop|toggle|lap|reset|quit>; repeatable.",
        transform: { argument in
            guard let scheduled = ScheduledAction(argument: argument) else {
                throw ValidationError("--at takes <seconds>:<action>, for example 2.5:lap, not '\(argument)'")
            }
            return scheduled
        })
    var script: [ScheduledAction] = []

    @Option(help: "Milliseconds of simulated slow work once per running second, as a busy app has; frames drop (default: none).")
    var stall: Double = 0

    @Option(help: "Write both approaches' drift over time to this SVG file.")
    var plot: String?

    @Option(name: .customLong("trace-svg"), help: ArgumentHelp(TraceSVG.help, valueName: "file"))
    var traceSVG: String?

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a number of seconds greater than zero, not \(duration)")
        }
        guard stall.isFinite, stall >= 0, stall < 1000 else {
            throw ValidationError("--stall must be in [0, 1000) milliseconds, not \(stall)")
        }
    }

    func run() throws {
        let loop = EVRunLoop.current
        loop.recordsMetrics = json
        let timeline = TraceSVG(recording: loop, to: traceSVG, title: "stopwatch")
        let interactive = isatty(STDIN_FILENO) == 1
        let configuration = StopwatchConfiguration(
            startsAtOnce: start || !interactive, script: script,
            locale: locale.map(Locale.init(identifier:)) ?? .current, stallMilliseconds: stall)
        let session = StopwatchSession(loop: loop, configuration: configuration)
        if !json {
            let screen = StopwatchScreen(redraws: isatty(STDOUT_FILENO) == 1)
            session.onEvent = { event, session in
                if let text = screen.text(for: event, session: session) { Output.write(text) }
            }
        }
        var sources = InterruptSignals.sources { loop.stop() }
        let terminal = interactive ? TerminalMode(cbreak: STDIN_FILENO) : nil
        defer { terminal?.restore() }
        if terminal != nil {
            sources.append(try KeyInput.source(reading: STDIN_FILENO, handler: EVRunLoop.isolated { bytes in
                for byte in bytes {
                    if let action = Action(key: byte) { session.perform(action) }
                }
            }))
        }
        for source in sources { loop.add(source, forMode: .default) }

        session.start()
        loop.runDefaultMode(forSeconds: duration)
        for source in sources { source.invalidate() }
        terminal?.restore()

        let summary = session.finish()
        if let plot { try DriftPlot.figure(timeline: session.driftTimeline).write(toFile: plot) }
        try timeline?.write()
        Output.write(json ? try SummaryJSON.encode(summary, metrics: loop.metrics) + "\n" : "\n\n" + summary.table() + "\n")
    }
}
