import CGtk
import RunLoopKit
import RunLoopKitGLib
import TaskTimers

/// The application's main loop: `EVRunLoop.main.run()`, hosting GLib's default context (GTK's
/// events, drawing and frame clock) in RunLoopKit's common modes.
///
/// This direction rather than `g_application_run` with RunLoopKit attached as a GSource:
/// the task list's scroll is UIKit's tracking mode, a nested run of a mode of RunLoopKit's,
/// and GTK has to keep drawing inside it. Hosted in the common modes, GLib runs in that
/// nested run too, while timers added to the default mode alone (the stopwatch's frame
/// timer) wait for it to end, as on iOS.
@MainActor
enum GtkTimersApplication {
    /// Runs the window until it closes; returns the task list's and the stopwatch's reports.
    static func run(refreshMode: RefreshMode, automation: TimersWindow.Automation) -> [String] {
        gtk_init()
        // snippet: gtk-timers-main-loop
        let glib = EVRunLoop.main.host()  // GLib's default context, in the common modes
        let window = TimersWindow(loop: .main, refreshMode: refreshMode, automation: automation)
        EVRunLoop.main.run()              // until the window closes (its close-request stops it)
        let (tasks, stopwatch) = window.finish()
        glib.unhost()
        // end
        return ["task list:"] + (tasks?.lines ?? []) + ["stopwatch:", stopwatch.table()]
    }
}
