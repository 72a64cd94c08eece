// swift-tools-version: 6.1
import PackageDescription

// The GTK 4 example in a package of its own, so that `make test` at the root never needs GTK:
// `make gtk-demo` at the root builds and runs it, and scripts/gtk-screenshot-test checks it
// under Xvfb.
let package = Package(
    name: "gtk-timers",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The library, by path: the repository root; the scenarios' logic libraries, from
        // the examples' package.
        .package(name: "RunLoopKit", path: "../..", traits: ["Metrics"]),
        .package(name: "Examples", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // GTK 4's headers and libraries, through pkg-config (Debian's libgtk-4-dev).
        .systemLibrary(
            name: "CGtk",
            path: "CGtk",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"])]
        ),
        // S3's task list and S1's stopwatch as one GTK 4 window on EVRunLoop.main.
        .executableTarget(
            name: "gtk-timers",
            dependencies: [
                "CGtk",
                .product(name: "RunLoopKit", package: "RunLoopKit"),
                .product(name: "RunLoopKitGLib", package: "RunLoopKit"),
                .product(name: "TaskTimers", package: "Examples"),
                .product(name: "Stopwatch", package: "Examples"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Main"
        ),
    ],
    swiftLanguageModes: [.v6]
)
