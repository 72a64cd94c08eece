import CGtk
import Foundation
import RunLoopKit
import TaskTimers

/// S3's task list as GTK widgets, driven by the task-timers example's own ``TaskTimersApp``:
/// "Add task" adds a row, and one 1 s `EVTimer` with 0.1 s tolerance, in the mode
/// `--refresh-mode` names (the common modes by default), refreshes every row's age.
///
/// "Scroll" does what UIKit does while a finger drags a list: the app runs the loop in its
/// `tracking` mode for two seconds, moving the list down and back up. GTK keeps drawing
/// then (GLib's sources run in the common modes, the tracking mode among them), and the ages
/// keep advancing because the refresh timer is in the common modes too; with
/// `--refresh-mode default` they freeze until the scroll ends, as on iOS.
@MainActor
final class TaskListPane {
    /// The pane's top widget.
    let root: Widget
    /// The scrolled list: its on-screen region is where the ages change.
    let scroller: Widget
    /// The "Scroll" button.
    let scrollButton: Widget
    private let list: Widget
    private let statusLine: Widget
    private let loop: EVRunLoop
    private var rows: [Int: (row: Widget, title: Widget, age: Widget)] = [:]
    private var app: TaskTimersApp?
    /// The last state drawn.
    private(set) var state: TaskScreenState?
    /// Called after every draw whose refresh tick count changed, for `--print-labels`.
    var onTick: (() -> Void)?

    init(loop: EVRunLoop, refreshMode: RefreshMode) {
        self.loop = loop
        root = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)
        let heading = gtk_label_new("Tasks")!
        gtk_widget_add_css_class(heading, "pane-title")
        gtk_widget_set_halign(heading, GTK_ALIGN_START)
        gtk_box_append(root.as(GtkBox.self), heading)

        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        let add = gtk_button_new_with_label("Add task")!
        let complete = gtk_button_new_with_label("Complete")!
        let scroll = gtk_button_new_with_label("Scroll (tracking mode)")!
        scrollButton = scroll
        for button in [add, complete, scroll] { gtk_box_append(buttons.as(GtkBox.self), button) }
        gtk_box_append(root.as(GtkBox.self), buttons)

        list = gtk_list_box_new()
        gtk_list_box_set_selection_mode(list.opaque, GTK_SELECTION_NONE)
        scroller = gtk_scrolled_window_new()
        gtk_scrolled_window_set_policy(scroller.opaque, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(scroller.opaque, list)
        gtk_widget_set_vexpand(scroller, 1)
        gtk_widget_add_css_class(scroller, "task-list")
        gtk_box_append(root.as(GtkBox.self), scroller)

        statusLine = gtk_label_new("")
        gtk_widget_set_halign(statusLine, GTK_ALIGN_START)
        gtk_widget_add_css_class(statusLine, "status-line")
        // Ellipsized, so that a longer status (a scroll's) does not widen the window.
        gtk_label_set_ellipsize(statusLine.opaque, PANGO_ELLIPSIZE_END)
        gtk_box_append(root.as(GtkBox.self), statusLine)

        let app = TaskTimersApp(loop: loop, refreshMode: refreshMode, draw: { [weak self] state in
            MainActor.assumeIsolated { self?.show(state) }
        })
        self.app = app
        Signal.connect(add.raw, "clicked") { [weak self] in self?.perform(.add) }
        Signal.connect(complete.raw, "clicked") { [weak self] in self?.perform(.complete) }
        Signal.connect(scroll.raw, "clicked") { [weak self] in self?.perform(.scroll) }
        // A click on a row selects it ("Complete" completes the selected task): the board
        // moves its selection one row at a time, as the terminal example's arrow keys do.
        Signal.connect(list.raw, "row-activated", argument: { [weak self] row in
            guard let self, let row else { return }
            select(row: Int(gtk_list_box_row_get_index(row.assumingMemoryBound(to: GtkListBoxRow.self))))
        })
        app.start()
    }

    /// Does what a button (or the automatic mode's script) asks; a scroll returns when it is over.
    func perform(_ action: TaskAction) {
        app?.perform(action)
    }

    private func select(row: Int) {
        guard let rows = state?.rows, rows.indices.contains(row),
              let selected = rows.firstIndex(where: \.isSelected) else { return }
        for _ in 0..<abs(row - selected) { perform(row < selected ? .up : .down) }
    }

    /// The age labels' texts, top row first.
    var ageTexts: [String] {
        (state?.rows ?? []).compactMap { rows[$0.id].map { String(cString: gtk_label_get_text($0.age.opaque)) } }
    }

    /// How far the list is scrolled, in pixels.
    var scrollOffset: Double {
        gtk_adjustment_get_value(gtk_scrolled_window_get_vadjustment(scroller.opaque))
    }

    /// Ends the refresh timer (and an animation) and returns what the session measured.
    func finish() -> SessionReport? {
        defer { app = nil }
        return app?.finish()
    }

    private func show(_ state: TaskScreenState) {
        let ticked = state.ticks != self.state?.ticks
        self.state = state
        for row in state.rows {
            let widgets = rows[row.id] ?? addRow(title: row.title)
            rows[row.id] = widgets
            gtk_label_set_text(widgets.age.opaque, row.status)
            if row.isSelected {
                gtk_widget_add_css_class(widgets.row, "selected-task")
            } else {
                gtk_widget_remove_css_class(widgets.row, "selected-task")
            }
            if row.ageSeconds == nil {
                gtk_widget_add_css_class(widgets.title, "done")
            }
        }
        if let progress = state.scrollProgress { scroll(to: progress) }
        let mode = loop.currentMode.map { $0 == .default ? "default" : $0.rawValue } ?? "-"
        let what = state.scrollProgress != nil ? "SCROLLING: the loop runs the tracking mode"
            : state.celebrationBar.map { "ALL DONE! [\($0)]" }
            ?? (state.hasRefreshTimer ? "refresh timer running" : "no refresh timer")
        gtk_label_set_text(statusLine.opaque, """
            One 1 s EVTimer, tolerance 0.1 s, in the .\(state.refreshMode.rawValue) mode(s)
            \(what) · ticks \(state.ticks) · loop mode: \(mode)
            """)
        if ticked { onTick?() }
    }

    private func addRow(title: String) -> (row: Widget, title: Widget, age: Widget) {
        let box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)!
        gtk_widget_add_css_class(box, "task-row")
        let titleLabel = gtk_label_new(title)!
        gtk_widget_set_hexpand(titleLabel, 1)
        gtk_widget_set_halign(titleLabel, GTK_ALIGN_START)
        let age = gtk_label_new("")!
        gtk_widget_add_css_class(age, "age")
        gtk_box_append(box.as(GtkBox.self), titleLabel)
        gtk_box_append(box.as(GtkBox.self), age)
        gtk_list_box_append(list.opaque, box)
        return (box, titleLabel, age)
    }

    /// Moves the list to `progress` of a scroll gesture: down to the end at 0.5, back up at 1.
    private func scroll(to progress: Double) {
        let adjustment = gtk_scrolled_window_get_vadjustment(scroller.opaque)
        let range = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
            - gtk_adjustment_get_lower(adjustment)
        let there = 1 - abs(2 * progress - 1)
        gtk_adjustment_set_value(adjustment, gtk_adjustment_get_lower(adjustment) + max(0, range) * there)
    }
}
