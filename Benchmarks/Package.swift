// swift-tools-version: 6.1
import PackageDescription

// loop-bench in a package of its own, so that `make test` at the root never builds the
// benchmark's peers (SwiftNIO, swift-async-algorithms). `make bench` at the root runs it.
let package = Package(
    name: "loop-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "RunLoopKit", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Peers: SwiftNIO's event loop, and swift-async-algorithms' AsyncTimerSequence.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        .target(
            name: "CLibevBench",
            path: "CLibevBench",
            linkerSettings: [.linkedLibrary("ev")]
        ),
        .executableTarget(
            name: "loop-bench",
            dependencies: [
                .product(name: "RunLoopKit", package: "RunLoopKit"),
                // The machine chart of the report (the others: Charts/LineChart.swift).
                .product(name: "RunLoopKitSVGPlot", package: "RunLoopKit"),
                // GLib both ways (the glib workload); its CRunLoopKitGLib module (<glib.h>) comes with it.
                .product(name: "RunLoopKitGLib", package: "RunLoopKit"),
                "CLibevBench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            path: "loop-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
