import Glibc

/// Unbuffered writes to stdout, so that live redraws appear at once and never interleave
/// with buffered text.
enum Output {
    /// Writes `text` to stdout in full.
    static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
