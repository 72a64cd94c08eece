import CGtk
import Foundation
import RunLoopKit
import Stopwatch

/// S1's stopwatch as GTK widgets, driven by the stopwatch example's own ``StopwatchSession``:
/// mm:ss.hh computed from the start instant on the loop's monotonic clock (never counted),
/// redrawn by a 100 Hz `EVFrameTimer` that is paused while the stopwatch is stopped.
///
/// The session adds its frame timer to the default mode, as a display link usually is: while
/// the task list scrolls (the tracking mode) the label stands still, and the first frame
/// after the scroll shows the right time at once, since it is computed, not counted.
@MainActor
final class StopwatchPane {
    /// The pane's top widget.
    let root: Widget
    /// The mm:ss.hh label.
    let display: Widget
    private let session: StopwatchSession

    init(loop: EVRunLoop, startsAtOnce: Bool) {
        root = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)
        let heading = gtk_label_new("Stopwatch")!
        gtk_widget_add_css_class(heading, "pane-title")
        gtk_widget_set_halign(heading, GTK_ALIGN_START)
        gtk_box_append(root.as(GtkBox.self), heading)

        display = gtk_label_new("")
        gtk_widget_add_css_class(display, "stopwatch")
        gtk_widget_set_vexpand(display, 1)
        gtk_box_append(root.as(GtkBox.self), display)

        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        gtk_widget_set_halign(buttons, GTK_ALIGN_CENTER)
        let actions: [(String, Stopwatch.Action)] = [("Start", .start), ("Stop", .stop), ("Reset", .reset)]
        let note = gtk_label_new("EVFrameTimer, 100 frames per second,\npaused while stopped; default mode")!
        gtk_widget_add_css_class(note, "status-line")
        gtk_box_append(root.as(GtkBox.self), buttons)
        gtk_box_append(root.as(GtkBox.self), note)

        session = StopwatchSession(loop: loop, configuration: StopwatchConfiguration(
            startsAtOnce: startsAtOnce, locale: Locale.current))
        for (title, action) in actions {
            let button = gtk_button_new_with_label(title)!
            gtk_box_append(buttons.as(GtkBox.self), button)
            Signal.connect(button.raw, "clicked") { [weak self] in self?.session.perform(action) }
        }
        let display = display
        session.onEvent = { _, session in
            MainActor.assumeIsolated { gtk_label_set_text(display.opaque, session.display) }
        }
        session.start()
    }

    /// The text the label shows.
    var text: String { String(cString: gtk_label_get_text(display.opaque)) }

    /// Stops the frame timer.
    func finish() -> StopwatchSummary { session.finish() }
}
