import ArgumentParser
import ExampleSupport
import Glibc
import RunLoopKit
import TaskTimers

/// `task-timers`: a task list whose rows show how long ago each task was created, refreshed
/// by a 1 s timer with tolerance; scrolling runs a tracking mode, the background stops the
/// timers, and finishing every task plays an animation on a display link.
@main
struct TaskTimersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "task-timers",
        abstract: "A task list with live timers: run loop modes, timer tolerance and a display link.",
        discussion: """
            Keys when standard input is a terminal: a add a task, d complete the selected one, \
            j/k or arrows move the selection, s scroll (the loop runs the "tracking" mode for \
            2 s), b toggle the background, q quit; Ctrl-C interrupts and still prints the summary.

            Without a terminal and without --script, a built-in script runs:
            \(defaultScript)

            The run ends at q, at the end of the script, after --duration, or at Ctrl-C.
            """)

    /// What a non-interactive run does when no script is given.
    static let defaultScript = "a,a,a,wait 1.5,s,wait 0.5,d,d,d,wait 2,a,wait 1.5,b,wait 2,b,wait 1.5"

    @Option(help: "The refresh timer's mode: default (freezes while scrolling) or common.")
    var timerMode: RefreshMode = .default

    @Option(help: "Comma-separated actions: a, d, j, k, up, down, s, b, q, \"wait <seconds>\".")
    var script: String?

    @Option(help: "Seconds to run at most (with --compare-tolerance: both runs together, default 10).")
    var duration: Double?

    @Flag(help: "Measure wakeups of many per-task 1 s timers without, then with, 0.1 s tolerance.")
    var compareTolerance = false

    @Option(help: "With --compare-tolerance: write both runs' wakeups over time to this SVG file.")
    var plot: String?

    @Option(help: "Tasks (timers) for --compare-tolerance.")
    var toleranceTasks = 200

    @Flag(help: "Print only the summary, as one JSON object on standard output.")
    var json = false

    @Option(name: .customLong("trace-svg"), help: ArgumentHelp(TraceSVG.help, valueName: "file"))
    var traceSVG: String?

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a number of seconds greater than 0, not \(duration)")
        }
        guard (1...100_000).contains(toleranceTasks) else {
            throw ValidationError("--tolerance-tasks must be in 1...100000, not \(toleranceTasks)")
        }
        if let script { _ = try TaskAction.parse(script: script) }
        if plot != nil, !compareTolerance { throw ValidationError("--plot draws the --compare-tolerance runs; add --compare-tolerance") }
    }

    func run() throws {
        let loop = EVRunLoop.current
        loop.recordsMetrics = json
        let timeline = TraceSVG(recording: loop, to: traceSVG, title: "task-timers")
        let keyboard = TerminalMode(cbreak: STDIN_FILENO)
        let screen = isatty(STDOUT_FILENO) == 1 && !json ? LiveScreen() : nil
        let controls = Controls(loop: loop)
        let log: (String) -> Void = { line in if screen == nil && !json { Output.write(line + "\n") } }
        var sources = InterruptSignals.sources(EVRunLoop.isolated { controls.interrupt() })
        if keyboard != nil {
            sources.append(try KeyInput.source(reading: STDIN_FILENO, handler: EVRunLoop.isolated { bytes in
                for key in Key.parse(bytes) { controls.handle(key) }
            }))
        }
        for source in sources {
            loop.add(source, forMode: .common)
            loop.add(source, forMode: ToleranceComparison.mode)
        }
        defer {
            for source in sources { source.invalidate() }
            screen?.close()
            keyboard?.restore()
        }

        let summary: TaskTimersSummary
        if compareTolerance {
            let each = Duration.milliseconds(Int64(((duration ?? 10) * 500).rounded()))
            let comparison = ToleranceComparison(timers: toleranceTasks)
            screen?.show(["task-timers: \(counted(toleranceTasks, "task")) with a 1 s timer each",
                          "measuring without tolerance, then with \(comparison.tolerance) s ...", "q quits"])
            var wakesWithout: [Double] = []
            var wakesWith: [Double] = []
            let without = comparison.run(on: loop, tolerance: 0, for: each) { wakesWithout.append($0) }
            let with = controls.quitRequested ? nil
                : comparison.run(on: loop, tolerance: comparison.tolerance, for: each) { wakesWith.append($0) }
            if let plot {
                try TolerancePlot.figure(runs: [("no tolerance", without.seconds, wakesWithout),
                                                ("\(comparison.tolerance) s tolerance", with?.seconds ?? 0, wakesWith)])
                    .write(toFile: plot)
            }
            summary = TaskTimersSummary(
                session: nil, toleranceComparison: ToleranceReport(timers: toleranceTasks, without: without, with: with))
        } else {
            let app = TaskTimersApp(loop: loop, refreshMode: timerMode, draw: { state in
                screen?.show(TaskScreen.lines(for: state, ansi: true))
            }, log: log)
            controls.app = app
            app.start()
            let actions = try TaskAction.parse(script: script ?? (keyboard == nil ? Self.defaultScript : ""))
            let runner = ScriptRunner(actions: actions, loop: loop, perform: app.perform,
                                      finished: { if !actions.isEmpty { app.perform(.quit) } })
            runner.start()
            // Without --duration: until q, or until the script (given or built in) ends.
            let runFor: Duration = duration.map { .milliseconds(Int64(($0 * 1000).rounded())) }
                ?? .seconds(365 * 86_400)
            if !app.quitRequested { loop.run(mode: .default, for: runFor) }
            runner.cancel()
            summary = TaskTimersSummary(session: app.finish(), toleranceComparison: nil)
        }

        for source in sources { source.invalidate() }
        screen?.close()
        keyboard?.restore()
        try timeline?.write()
        Output.write((json ? try SummaryJSON.encode(summary, metrics: loop.metrics, snakeCaseKeys: true) : summary.text) + "\n")
        if controls.interrupted { throw ExitCode(130) }
    }
}

extension RefreshMode: ExpressibleByArgument {}
