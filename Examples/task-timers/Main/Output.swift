import Glibc

/// Writes straight to standard output (file descriptor 1), unbuffered, so the live screen,
/// plain lines and the JSON summary never interleave out of order.
enum Output {
    /// Writes all of `text`, retrying after interrupted or partial writes.
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
