#if !ServiceLifecycle
import RunLoopKit

/// Without RunLoopKit's package trait "ServiceLifecycle", RunLoopKitServiceLifecycle has no
/// service: the trait brings in swift-server/swift-service-lifecycle, which no package using
/// only the other products should resolve. A use of the service then fails to compile with
/// this message.
@available(*, unavailable, message: "RunLoopKitServiceLifecycle needs RunLoopKit's package trait \"ServiceLifecycle\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"ServiceLifecycle\"])")
public struct EVRunLoopService {
    /// Unavailable: the service's initializer, so that a call names the trait.
    ///
    /// - Parameter name: the thread's name.
    @available(*, unavailable, message: "RunLoopKitServiceLifecycle needs RunLoopKit's package trait \"ServiceLifecycle\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"ServiceLifecycle\"])")
    public init(name: String? = "runloop") {
        misuse("EVRunLoopService: built without the package trait ServiceLifecycle")
    }

    /// Unavailable: the service's initializer with a graceful-shutdown handler, so that a
    /// call names the trait.
    ///
    /// - Parameters:
    ///   - name: the thread's name.
    ///   - onGracefulShutdown: what the loop runs at the graceful shutdown.
    @available(*, unavailable, message: "RunLoopKitServiceLifecycle needs RunLoopKit's package trait \"ServiceLifecycle\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"ServiceLifecycle\"])")
    public init(name: String? = "runloop", onGracefulShutdown: @escaping @Sendable (EVRunLoop) -> Void) {
        misuse("EVRunLoopService: built without the package trait ServiceLifecycle")
    }

    /// Unavailable: the service's initializer for a loop of `EVRunLoop.startThread(name:)`,
    /// so that a call names the trait.
    ///
    /// - Parameter loop: the loop.
    @available(*, unavailable, message: "RunLoopKitServiceLifecycle needs RunLoopKit's package trait \"ServiceLifecycle\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"ServiceLifecycle\"])")
    public init(loop: EVRunLoop) {
        misuse("EVRunLoopService: built without the package trait ServiceLifecycle")
    }
}
#endif
