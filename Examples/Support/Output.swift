import Glibc

/// Unbuffered writes to standard output (file descriptor 1), so that live redraws appear at
/// once and plain lines, the live screen and the JSON summary never interleave out of order.
public enum Output {
    /// Writes all of `text` to standard output, retrying after interrupted or partial
    /// writes; gives up when the descriptor accepts nothing more (an error or a 0-byte write).
    public static func write(_ text: String) {
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
