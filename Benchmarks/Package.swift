// swift-tools-version: 6.1
import PackageDescription

// loop-bench in a package of its own, so that `make test` at the root never builds the
// benchmark's peers (SwiftNIO, swift-async-algorithms). `make bench` at the root runs it.
let package = Package(
    name: "loop-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The library under test, by path: the repository root.
        .package(name: "RunLoopKit", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The raw libev side of every workload, in C, plus the clocks and counters all peers share.
        .target(
            name: "CLibevBench",
            path: "CLibevBench",
            linkerSettings: [.linkedLibrary("ev")]
        ),
        .executableTarget(
            name: "loop-bench",
            dependencies: [
                .product(name: "RunLoopKit", package: "RunLoopKit"),
                "CLibevBench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "loop-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
