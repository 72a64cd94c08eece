#if !Metrics
import RunLoopKit

/// Without RunLoopKit's package trait "Metrics", RunLoopKitMetrics has no reporter: the trait
/// brings in apple/swift-metrics, which no package using only the other products should
/// resolve. A use of the reporter then fails to compile with this message.
@available(*, unavailable, message: "RunLoopKitMetrics needs RunLoopKit's package trait \"Metrics\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"Metrics\"])")
public final class EVRunLoopMetricsReporter {
    /// Unavailable: the reporter's initializer, so that a call names the trait.
    @available(*, unavailable, message: "RunLoopKitMetrics needs RunLoopKit's package trait \"Metrics\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"Metrics\"])")
    public init(loop: EVRunLoop, label: String) {
        misuse("EVRunLoopMetricsReporter: built without the package trait Metrics")
    }
}
#endif
