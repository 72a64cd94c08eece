import CGtk
import RunLoopKit
import RunLoopKitGLib
import TaskTimers

/// The application's main loop, either way issue 26's GLib bridge goes.
///
/// By default (``MainLoop/host``), `EVRunLoop.main.run()` hosts GLib's default context (GTK's
/// events, drawing and frame clock) in RunLoopKit's common modes. The task list's scroll is
/// UIKit's tracking mode, a nested run of one of RunLoopKit's modes, and GTK has to keep
/// drawing inside it: hosted in the common modes, GLib runs there too, while timers added to
/// the default mode alone (the stopwatch's frame timer) wait for the scroll to end.
///
/// ``MainLoop/attach`` is the other direction, the usual one for an existing GTK program:
/// `g_application_run` drives, with `EVRunLoop.main` attached to GLib's default context as a
/// GSource running its default mode. Everything but the scroll works the same; during the
/// scroll's nested run GLib does not run, so the window is not redrawn until it ends.
@MainActor
enum GtkTimersApplication {
    /// Which loop drives the other.
    enum MainLoop: String, CaseIterable, Sendable {
        /// `EVRunLoop.main.run()` hosts GLib's default context in the common modes.
        case host
        /// `g_application_run`, with `EVRunLoop.main` attached as a GSource (default mode).
        case attach
    }

    /// Runs the window until it closes; returns the task list's and the stopwatch's reports.
    static func run(mainLoop: MainLoop, refreshMode: RefreshMode, automation: TimersWindow.Automation) -> [String] {
        let reports = switch mainLoop {
        case .host: hosting(refreshMode: refreshMode, automation: automation)
        case .attach: attached(refreshMode: refreshMode, automation: automation)
        }
        guard let (tasks, stopwatch) = reports else { return ["the application never activated"] }
        return ["task list:"] + (tasks?.lines ?? []) + ["stopwatch:", stopwatch.table()]
    }

    private static func hosting(refreshMode: RefreshMode, automation: TimersWindow.Automation) -> TimersWindow.Reports? {
        gtk_init()
        // snippet: gtk-timers-main-loop
        let glib = EVRunLoop.main.host()  // GLib's default context, in the common modes
        let window = TimersWindow(loop: .main, refreshMode: refreshMode, automation: automation)
        EVRunLoop.main.run()              // until the window closes (its close-request stops it)
        let reports = window.finish()
        glib.unhost()
        // end
        return reports
    }

    private static func attached(refreshMode: RefreshMode, automation: TimersWindow.Automation) -> TimersWindow.Reports? {
        // snippet: gtk-timers-attach
        let application = gtk_application_new("org.runloopkit.GtkTimers", G_APPLICATION_NON_UNIQUE)!
        let attachment = EVRunLoop.main.attach()  // a GSource of GLib's default context
        var window: TimersWindow?
        Signal.connect(UnsafeMutableRawPointer(application), "activate", {
            window = TimersWindow(loop: .main, refreshMode: refreshMode, automation: automation)
            gtk_window_set_application(window?.window.as(GtkWindow.self), application)
        })
        g_application_run(UnsafeMutableRawPointer(application).assumingMemoryBound(to: GApplication.self), 0, nil)
        let reports = window?.finish()
        attachment.detach()
        // end
        g_object_unref(UnsafeMutableRawPointer(application))
        return reports
    }
}
