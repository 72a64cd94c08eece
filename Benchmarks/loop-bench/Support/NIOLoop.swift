import NIOCore
import NIOPosix

/// The one SwiftNIO event loop every NIO measurement runs on: a group of one thread,
/// started at first use and kept for the process (as a server keeps its group).
enum NIOLoop {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    static var loop: any EventLoop { group.next() }

    /// Runs `body` on the event loop thread and waits for its result.
    static func onLoop<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        try! loop.submit(body).wait()
    }
}
