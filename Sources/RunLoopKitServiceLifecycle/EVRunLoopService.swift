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
/// The group's signals are the group's: on Linux, swift-service-lifecycle traps each of them
/// with a libdispatch signal source, which installs libdispatch's own handler for the signal
/// (and reads it through a signalfd), so a RunLoopKit `EVSource(signal:)` for the same signal
/// would never fire. RunLoopKit checks: the loop watching such a signal, or ``run()`` when
/// the group starts the service, stops the program with a message naming the signal. Work
/// the loop should do on `SIGTERM` goes in `onGracefulShutdown`
/// (``init(name:onGracefulShutdown:)``), which the loop runs at the group's graceful shutdown
/// before it is shut down.
///
/// CFRunLoop has no counterpart; this is `EVRunLoop.startThread(name:)` and
/// `EVRunLoop.shutdown()` under the lifecycle that swift-service-lifecycle gives Swift
/// servers (as its `Service` wraps a SwiftNIO `EventLoopGroup` in a server).
public struct EVRunLoopService: Service {
    /// The loop the service runs, on its own thread until ``run()`` returns.
    public let loop: EVRunLoop

    /// Run on the loop's thread at the graceful shutdown, before the loop is shut down.
    private let onGracefulShutdown: (@Sendable (EVRunLoop) -> Void)?

    /// Starts a thread with its loop (`EVRunLoop.startThread(name:)`); ``run()`` shuts it
    /// down.
    ///
    /// - Parameter name: the thread's name, as `top` and debuggers show it.
    public init(name: String? = "runloop") {
        loop = EVRunLoop.startThread(name: name)
        onGracefulShutdown = nil
    }

    /// Starts a thread with its loop (`EVRunLoop.startThread(name:)`) and runs
    /// `onGracefulShutdown` on it when the group shuts down gracefully (its
    /// `gracefulShutdownSignals`, such as `SIGTERM`, or `triggerGracefulShutdown()`), before
    /// ``run()`` shuts the loop down: the loop's `SIGTERM` handling, in place of a signal
    /// source the group's own trap would take the signal from. Not on cancellation.
    ///
    /// - Parameters:
    ///   - name: the thread's name, as `top` and debuggers show it.
    ///   - onGracefulShutdown: run once on the loop's thread, given the loop, in its common
    ///     modes; the loop's timers and sources still run until it returns.
    public init(name: String? = "runloop", onGracefulShutdown: @escaping @Sendable (EVRunLoop) -> Void) {
        loop = EVRunLoop.startThread(name: name)
        self.onGracefulShutdown = onGracefulShutdown
    }

    /// Serves `loop`, which `EVRunLoop.startThread(name:)` made; ``run()`` shuts it down.
    /// Any other loop stops the program with a message when the service shuts it down.
    ///
    /// - Parameter loop: a loop that `EVRunLoop.startThread(name:)` returned.
    public init(loop: EVRunLoop) {
        self.loop = loop
        onGracefulShutdown = nil
    }

    /// Keeps the loop running until the group's graceful shutdown or the task's
    /// cancellation, then shuts the loop down (`EVRunLoop.shutdown()`) and returns once its
    /// thread has ended. Work handed to the loop afterwards is dropped. At a graceful
    /// shutdown, the `onGracefulShutdown` given to ``init(name:onGracefulShutdown:)`` runs on
    /// the loop first.
    ///
    /// The group has trapped its signals when it runs its services: a signal that a RunLoopKit
    /// signal source watches, and that the group (or anything else) took from it, stops the
    /// program here with a message naming the signal.
    ///
    /// The corresponding swift-service-lifecycle requirement is `Service.run()`.
    public func run() async throws {
        EVRunLoop.verifySignalSources(in: "EVRunLoopService.run()")
        // Thrown on cancellation: the loop is shut down either way, and the service ends.
        let graceful = (try? await gracefulShutdown()) != nil
        if graceful, let onGracefulShutdown {
            let loop = loop
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                // Resumed when the block has run, or when the loop drops it (shut down already).
                let finished = ResumedOnRelease(done)
                loop.perform(inModes: [.common], label: "onGracefulShutdown") {
                    withExtendedLifetime(finished) { onGracefulShutdown(loop) }
                }
            }
        }
        await loop.shutdown()
    }
}

/// Resumes its continuation when it is released: a block that holds it resumes the waiter
/// when it has run, or when the loop drops it without running it.
private final class ResumedOnRelease: Sendable {
    private let continuation: CheckedContinuation<Void, Never>

    init(_ continuation: CheckedContinuation<Void, Never>) {
        self.continuation = continuation
    }

    deinit { continuation.resume() }
}
#endif
