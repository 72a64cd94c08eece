import Glibc
import RunLoopKit

/// Key presses read from a terminal through a run-loop descriptor source.
public enum KeyInput {
    /// A source labelled "keys" that fires when `descriptor` has bytes and passes what is
    /// waiting (at most 64 bytes, never none) to `handler`; at end of input or on a read
    /// error other than `EINTR`/`EAGAIN` it invalidates itself.
    ///
    /// - Throws: ``EVRunLoop/Error`` when `descriptor` is not open.
    public static func source(
        reading descriptor: Int32, handler: @escaping @Sendable ([UInt8]) -> Void
    ) throws(EVRunLoop.Error) -> EVSource {
        try EVSource(fileDescriptor: descriptor, for: .read, label: "keys") { source in
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else {
                if count == 0 || errno != EINTR && errno != EAGAIN { source.invalidate() }
                return
            }
            handler(Array(buffer[..<count]))
        }
    }
}
