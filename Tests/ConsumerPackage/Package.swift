// swift-tools-version: 6.1
import PackageDescription

// A package that takes RunLoopKit (the repository root, by path) with every product, and
// declares targets of its own with the names that RunLoopKit's targets once had and that
// other packages use (rhx/SwiftGLib, which SwiftGtk depends on, has a `CGLib`). SwiftPM
// requires target names to be unique across a package graph, so this builds only while
// RunLoopKit's own names stay its own. scripts/consumer-test builds and runs it (.ci/run).
let package = Package(
    name: "consumer",
    dependencies: [
        // Every trait, for the products behind them: RunLoopKitMetrics, RunLoopKitSystem,
        // RunLoopKitServiceLifecycle.
        .package(name: "RunLoopKit", path: "../..", traits: ["Metrics", "SwiftSystem", "ServiceLifecycle"]),
    ],
    targets: [
        // A C target, as a package wrapping libev would have.
        .target(name: "CLibev"),
        // GLib through pkg-config, as rhx/SwiftGLib's CGLib.
        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .target(name: "TestSupport"),
        .target(name: "SVGPlot"),
        .target(name: "TraceTimeline"),
        .target(name: "ExampleSupport"),
        .executableTarget(
            name: "consumer",
            dependencies: [
                "CLibev", "CGLib", "TestSupport", "SVGPlot", "TraceTimeline", "ExampleSupport",
                .product(name: "RunLoopKit", package: "RunLoopKit"),
                .product(name: "RunLoopKitExperimental", package: "RunLoopKit"),
                .product(name: "RunLoopKitSVGPlot", package: "RunLoopKit"),
                .product(name: "RunLoopKitTraceTimeline", package: "RunLoopKit"),
                .product(name: "RunLoopKitGLib", package: "RunLoopKit"),
                .product(name: "RunLoopKitMetrics", package: "RunLoopKit"),
                .product(name: "RunLoopKitSystem", package: "RunLoopKit"),
                .product(name: "RunLoopKitServiceLifecycle", package: "RunLoopKit"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
