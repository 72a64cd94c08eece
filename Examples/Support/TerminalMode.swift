import Glibc

/// A terminal's input mode, switched to "cbreak" while an example reads keys: keys arrive
/// one at a time, unechoed, while Ctrl-C still raises SIGINT (`ISIG` stays on).
/// ``restore()`` (or deinitialization) puts the saved settings back.
public final class TerminalMode {
    private let descriptor: Int32
    private var saved = termios()
    private var changed = false

    /// Switches `descriptor` to cbreak mode, discarding input typed before; nil when it is not
    /// a terminal or its mode cannot be changed.
    public init?(cbreak descriptor: Int32) {
        self.descriptor = descriptor
        guard isatty(descriptor) == 1, tcgetattr(descriptor, &saved) == 0 else { return nil }
        var cbreak = saved
        cbreak.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &cbreak.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(descriptor, TCSAFLUSH, &cbreak) == 0 else { return nil }
        changed = true
    }

    /// Puts the settings saved at creation back, discarding keys not read; later calls do
    /// nothing.
    public func restore() {
        guard changed else { return }
        changed = false
        tcsetattr(descriptor, TCSAFLUSH, &saved)
    }

    deinit { restore() }
}
