/// The terminal's alternate screen, redrawn in place; ``close()`` returns to the normal
/// screen with the cursor visible, so the summary prints below the shell's history.
public final class LiveScreen {
    private var isClosed = false

    /// Switches to the alternate screen and hides the cursor.
    public init() {
        Output.write("\u{1B}[?1049h\u{1B}[?25l")
    }

    /// Replaces the screen's content with `lines`.
    public func show(_ lines: [String]) {
        Output.write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[J")
    }

    /// Shows the cursor and leaves the alternate screen; later calls do nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        Output.write("\u{1B}[?25h\u{1B}[?1049l")
    }
}
