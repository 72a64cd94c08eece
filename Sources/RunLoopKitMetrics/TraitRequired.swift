#if !Metrics
/// Without RunLoopKit's package trait "Metrics", RunLoopKitMetrics has no reporter: the trait
/// brings in apple/swift-metrics, which no package using only the other products should
/// resolve. A use of the reporter then fails with this message.
@available(*, unavailable, message: "RunLoopKitMetrics needs RunLoopKit's package trait \"Metrics\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"Metrics\"])")
public enum EVRunLoopMetricsReporter {}
#endif
