import Glibc

/// Standard input's terminal in raw mode: keys arrive one at a time without echo, while
/// Ctrl-C still raises SIGINT (`ISIG` stays on). ``restore()`` puts the saved settings back.
final class RawKeyboard {
    private var saved = termios()
    private var isRestored = false

    /// Switches the terminal to raw mode; nil when standard input is not a terminal.
    init?() {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { return nil }
    }

    /// Restores the settings saved at creation; later calls do nothing.
    func restore() {
        guard !isRestored else { return }
        isRestored = true
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
    }

    /// Reads the bytes waiting on standard input (at most 64); empty at end of file.
    static func readAvailable() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer[..<count]) : []
    }
}
