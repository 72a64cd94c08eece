import Glibc
import RunLoopKit
import Stopwatch

/// Reads keys from stdin through a descriptor source and turns them into actions.
enum KeyReader {
    /// A source that fires when stdin has bytes, reads them all and performs their actions;
    /// at end of input it invalidates itself.
    static func source(for session: StopwatchSession) throws(EVRunLoop.Error) -> EVSource {
        try EVSource(fileDescriptor: STDIN_FILENO, for: .read, label: "keys") { source in
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            guard count > 0 else {
                if count == 0 || errno != EINTR && errno != EAGAIN { source.invalidate() }
                return
            }
            for byte in buffer[..<count] {
                if let action = Action(key: byte) { session.perform(action) }
            }
        }
    }
}
