#if ServiceLifecycle
// Built under the package trait ServiceLifecycle, which brings swift-service-lifecycle.
public import RunLoopKit
public import ServiceLifecycle

/// A run loop on a thread of its own as a swift-service-lifecycle `Service`: a
/// `ServiceGroup` runs it beside a server's other services, and its graceful shutdown (the
/// group's `gracefulShutdownSignals`, such as `SIGTERM`) or its cancellation shuts the loop
/// down: ``run()`` stops the loop, lets its timers and sources go, joins its thread, and
/// returns.
///
/// The thread starts when the service is made, so that timers and sources can be added to
/// ``loop`` before the group runs (from any thread, in its ``RunLoopKit/EVRunLoop/Mode/common``
/// or default mode):
///
/// ```swift
/// let service = EVRunLoopService(name: "runloop")
/// service.loop.add(EVTimer(interval: .seconds(1), repeats: true) { _ in print("tick") }, forMode: .common)
/// let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm])
/// try await group.run()  // returns once SIGTERM has shut the loop down
/// ```
///
/// CFRunLoop has no counterpart; this is `EVRunLoop.startThread(name:)` and
/// `EVRunLoop.shutdown()` under the lifecycle that swift-service-lifecycle gives Swift
/// servers (as its `Service` wraps a SwiftNIO `EventLoopGroup` in a server).
public struct EVRunLoopService: Service {
    /// The loop the service runs, on its own thread until ``run()`` returns.
    public let loop: EVRunLoop

    /// Starts a thread with its loop (`EVRunLoop.startThread(name:)`); ``run()`` shuts it
    /// down.
    ///
    /// - Parameter name: the thread's name, as `top` and debuggers show it.
    public init(name: String? = "runloop") {
        loop = EVRunLoop.startThread(name: name)
    }

    /// Serves `loop`, which `EVRunLoop.startThread(name:)` made; ``run()`` shuts it down.
    /// Any other loop stops the program with a message when the service shuts it down.
    ///
    /// - Parameter loop: a loop that `EVRunLoop.startThread(name:)` returned.
    public init(loop: EVRunLoop) {
        self.loop = loop
    }

    /// Keeps the loop running until the group's graceful shutdown or the task's
    /// cancellation, then shuts the loop down (`EVRunLoop.shutdown()`) and returns once its
    /// thread has ended. Work handed to the loop afterwards is dropped.
    ///
    /// The corresponding swift-service-lifecycle requirement is `Service.run()`.
    public func run() async throws {
        // Thrown on cancellation: the loop is shut down either way, and the service ends.
        try? await gracefulShutdown()
        await loop.shutdown()
    }
}
#endif
