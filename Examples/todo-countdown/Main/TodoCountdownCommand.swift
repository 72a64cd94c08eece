import ArgumentParser
import ExampleSupport
import Glibc
import RunLoopKit
import TodoCountdown

/// `todo-countdown`: a todo table counting down to each item's due time, redrawn by 0.1 s
/// polling or by a wall-clock aligned 1 s timer, with the skipped and repeated seconds,
/// wakeups and redraw lag of each.
@main
struct TodoCountdownCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo-countdown",
        abstract: "Rows counting down to their due time: 0.1 s polling versus a wall-clock aligned 1 s timer.",
        discussion: """
            Items are due at whole seconds, +10 s, +20 s, ... from the start. Each redraw \
            computes every row from one "now". The poll strategy ticks every 0.1 s and redraws \
            when at least 1 s passed since its last redraw; the aligned strategy fires on \
            every whole wall-clock second and reads the loop's wakeDate. The summary counts \
            displayed seconds skipped or shown twice, wakeups per second and the lag from a \
            second's start to its redraw.

            Keys when standard input is a terminal: j/k or arrows move the selection, q quits, \
            Ctrl-C interrupts (the summary is still printed).
            """)

    @Option(help: "When to redraw: poll or aligned.")
    var strategy: Strategy = .aligned

    @Flag(help: "Run poll, then aligned, each for --duration, in one process.")
    var compare = false

    @Option(help: "Seconds to run each strategy (default: until q when standard input is a terminal, otherwise 10).")
    var duration: Double?

    @Option(help: "Number of items, due at +10 s, +20 s, ...")
    var items = 5

    @Flag(help: "Remove items once due instead of showing \"done\".")
    var removeDone = false

    @Option(help: "Row to select at the start, from 1.")
    var select: Int?

    @Flag(help: "Print only the summary, as one JSON object on standard output.")
    var json = false

    @Option(help: "Write each strategy's lag and wakeups over time to this SVG file.")
    var plot: String?

    @Option(name: .customLong("trace-svg"), help: ArgumentHelp(TraceSVG.help, valueName: "file"))
    var traceSVG: String?

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a number of seconds greater than 0, not \(duration)")
        }
        guard (0...1000).contains(items) else { throw ValidationError("--items must be in 0...1000, not \(items)") }
        if let select, select < 1 { throw ValidationError("--select counts rows from 1, not \(select)") }
    }

    func run() throws {
        let loop = EVRunLoop.current
        loop.recordsMetrics = json
        let timeline = TraceSVG(recording: loop, to: traceSVG, title: "todo-countdown")
        let controls = RunControls(loop: loop)
        let keyboard = TerminalMode(cbreak: STDIN_FILENO)
        let screen = isatty(STDOUT_FILENO) == 1 && !json ? LiveScreen() : nil
        var sources = InterruptSignals.sources(EVRunLoop.isolated { controls.interrupt() })
        if keyboard != nil {
            sources.append(try KeyInput.source(reading: STDIN_FILENO, handler: EVRunLoop.isolated { bytes in
                for key in Key.parse(bytes) { controls.handle(key) }
            }))
        }
        for source in sources { loop.add(source, forMode: .common) }
        defer {
            for source in sources { source.invalidate() }
            screen?.close()
            keyboard?.restore()
        }

        let runFor: Duration = duration.map { .milliseconds(Int64(($0 * 1000).rounded())) }
            ?? (keyboard != nil ? .seconds(365 * 86_400) : .seconds(10))
        var reports: [StrategyReport] = []
        var timelines: [(strategy: Strategy, timeline: [(seconds: Double, wakeups: Int, lag: Double?)])] = []
        var lastSelected: Int?
        for strategy in compare ? Strategy.allCases : [strategy] where !controls.quitRequested {
            var list = TodoList.sample(count: items, start: loop.wallNow, removesDone: removeDone)
            if let select { list.select(row: select - 1) }
            let session = CountdownSession(strategy: strategy, list: list, loop: loop) { frame in
                if let screen {
                    screen.show(CountdownScreen.lines(for: frame, ansi: true))
                } else if !json {
                    Output.write(CountdownScreen.plainLine(for: frame) + "\n")
                }
            }
            controls.session = session
            session.start()
            loop.run(mode: .default, for: runFor)
            reports.append(session.stop())
            timelines.append((strategy, session.timeline))
            lastSelected = session.list.selectedID
            controls.session = nil
        }

        for source in sources { source.invalidate() }
        screen?.close()
        keyboard?.restore()
        let summary = CountdownSummary(items: items, removeDone: removeDone, selectedItem: lastSelected,
                                       strategies: reports)
        try timeline?.write()
        Output.write((json ? try SummaryJSON.encode(summary, metrics: loop.metrics, snakeCaseKeys: true) : summary.text) + "\n")
        if let plot { try CountdownPlot.figure(runs: timelines).write(toFile: plot) }
        if controls.interrupted { throw ExitCode(130) }
    }
}

extension Strategy: ExpressibleByArgument {}
