import Glibc

/// The terminal's input mode: switched to "cbreak" (keys arrive one at a time, unechoed;
/// Ctrl-C still sends SIGINT) while the stopwatch reads keys, and restored afterwards.
final class TerminalMode {
    private let descriptor: Int32
    private var saved = termios()
    private var changed = false

    /// Switches `descriptor` (a terminal) to cbreak mode.
    init?(cbreak descriptor: Int32) {
        self.descriptor = descriptor
        guard isatty(descriptor) == 1, tcgetattr(descriptor, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(descriptor, TCSANOW, &raw) == 0 else { return nil }
        changed = true
    }

    /// Puts the saved mode back; safe to call twice.
    func restore() {
        guard changed else { return }
        changed = false
        tcsetattr(descriptor, TCSANOW, &saved)
    }

    deinit { restore() }
}
