import ArgumentParser
import CGtk
import Foundation
import RunLoopKit
import TaskTimers

/// `gtk-timers`: S3's task list and S1's stopwatch in a GTK 4 window, on RunLoopKit timers.
@main
struct GtkTimersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gtk-timers",
        abstract: "S3's task list and S1's stopwatch as a GTK 4 window on RunLoopKit's main loop.",
        discussion: """
            "Add task" adds a row; one 1 s timer with 0.1 s tolerance refreshes every row's age. \
            "Scroll" runs the loop in the tracking mode for 2 s, moving the list down and back. \
            The stopwatch's label is computed from its start instant on every frame of a 100 Hz \
            EVFrameTimer. The automatic flags drive the window without a person (the screenshot \
            test: --auto-add 12 --scroll-at 3 --run-seconds 8 --print-labels).
            """)

    @Option(help: "Add this many tasks by themselves at start (0.15 s apart), and start the stopwatch.")
    var autoAdd = 0

    @Option(help: "Scroll the list (2 s in the tracking mode) this many seconds after start, and not before the --auto-add tasks are all added; repeatable.")
    var scrollAt: [Double] = []

    @Option(help: "Close the window after this many seconds.")
    var runSeconds: Double?

    @Flag(help: "On every refresh tick, print the labels' texts and regions as one line of JSON.")
    var printLabels = false

    @Option(help: "The refresh timer's mode: common (refreshes while scrolling) or default (freezes).")
    var refreshMode = "common"

    @Option(help: "Which loop drives: host (EVRunLoop.main.run() hosts GLib's context) or attach (g_application_run, with EVRunLoop.main attached as a GSource; the window freezes while the list scrolls).")
    var mainLoop = "host"

    func validate() throws {
        guard (0...200).contains(autoAdd) else { throw ValidationError("--auto-add must be in 0...200, not \(autoAdd)") }
        if let runSeconds, !(runSeconds.isFinite && runSeconds > 0) {
            throw ValidationError("--run-seconds must be a number of seconds greater than 0, not \(runSeconds)")
        }
        if let bad = scrollAt.first(where: { !($0.isFinite && $0 >= 0) }) {
            throw ValidationError("--scroll-at must be a number of seconds at least 0, not \(bad)")
        }
        guard GtkTimersApplication.MainLoop(rawValue: mainLoop) != nil else {
            throw ValidationError("--main-loop must be host or attach, not \(mainLoop)")
        }
        guard RefreshMode(rawValue: refreshMode) != nil else {
            throw ValidationError("--refresh-mode must be common or default, not \(refreshMode)")
        }
    }

    func run() {
        let automation = TimersWindow.Automation(
            tasks: autoAdd, startsStopwatch: autoAdd > 0, scrolls: scrollAt, closeAfter: runSeconds,
            printsLabels: printLabels)
        let mode = RefreshMode(rawValue: refreshMode) ?? .common
        let driver = GtkTimersApplication.MainLoop(rawValue: mainLoop) ?? .host
        let lines = MainActor.assumeIsolated {
            GtkTimersApplication.run(mainLoop: driver, refreshMode: mode, automation: automation)
        }
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
