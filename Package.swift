// swift-tools-version: 6.1
import PackageDescription

// The library only: its products, their tests and the probes those tests launch. The examples
// (Examples/), the GTK example (Examples/gtk-timers) and the benchmark (Benchmarks/) are
// packages of their own that take this one by path, so that a package depending on
// RunLoopKit resolves nothing it does not use. Every target here is named for RunLoopKit:
// SwiftPM requires target names to be unique across a whole package graph.

/// swift-system and swift-service-lifecycle, only under their traits.
let systemPackage = Target.Dependency.product(
    name: "SystemPackage", package: "swift-system", condition: .when(traits: ["SwiftSystem"]))
let serviceLifecycle = Target.Dependency.product(
    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"]))

let package = Package(
    name: "RunLoopKit",
    products: [
        .library(name: "RunLoopKit", targets: ["RunLoopKit"]),
        // Opt-in, on the toolchain's experimental executor SPIs: EVRunLoop.main as the main
        // actor's executor, and Task.sleep on a loop's coalescing timers.
        .library(name: "RunLoopKitExperimental", targets: ["RunLoopKitExperimental"]),
        // A small dependency-free SVG line-chart writer: the examples' --plot, the benchmark's
        // charts, and the timeline's escaping.
        .library(name: "RunLoopKitSVGPlot", targets: ["RunLoopKitSVGPlot"]),
        // A trace drawn as an SVG timeline of its passes: pass-trace --svg, the examples'
        // --trace-svg. RunLoopKit itself draws nothing.
        .library(name: "RunLoopKitTraceTimeline", targets: ["RunLoopKitTraceTimeline"]),
        // GLib both ways: a GMainContext hosted in a loop's modes, a loop attached to a
        // GMainContext as a GSource. Only this product needs GLib.
        .library(name: "RunLoopKitGLib", targets: ["RunLoopKitGLib"]),
        // A loop's health metrics reported through swift-metrics: only with the package trait
        // "Metrics", so that a package using the other products never resolves swift-metrics.
        .library(name: "RunLoopKitMetrics", targets: ["RunLoopKitMetrics"]),
        // Descriptors and errors as swift-system's FileDescriptor, FilePath and Errno (the
        // toolchain ships no System module on Linux), with the trait SwiftSystem.
        .library(name: "RunLoopKitSystem", targets: ["RunLoopKitSystem"]),
        // A loop on its own thread as a swift-service-lifecycle Service, with the trait
        // ServiceLifecycle.
        .library(name: "RunLoopKitServiceLifecycle", targets: ["RunLoopKitServiceLifecycle"]),
    ],
    // A package's library products all count in its consumers' resolution: a product of its
    // own is not enough to keep a consumer of RunLoopKit from resolving its dependencies. A
    // trait is: a dependency used only under a trait the consumer did not enable is never
    // resolved. `make test` enables every trait.
    traits: [
        .trait(
            name: "Metrics",
            description: "The RunLoopKitMetrics product: a loop's metrics through apple/swift-metrics."
        ),
        .trait(name: "SwiftSystem", description: "The RunLoopKitSystem product: FileDescriptor, FilePath and Errno forms (apple/swift-system)."),
        .trait(name: "ServiceLifecycle", description: "The RunLoopKitServiceLifecycle product: a loop as a swift-service-lifecycle Service."),
    ],
    dependencies: [
        // Property tests of the timer queue under virtual time (test-only: never resolved by
        // a consumer).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // `make docs`: the DocC catalogue (a command plugin; nothing of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // RunLoopKitMetrics, with the trait "Metrics": the convention of Swift servers for
        // metrics (swift-prometheus exports it); its MetricsTestKit reads what the tests reported.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // RunLoopKitSystem: FileDescriptor and Errno, as swift-subprocess and servers pass them.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // RunLoopKitServiceLifecycle: how Swift servers start and stop (SIGTERM).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The child-process recipe (ChildProcesses.md): how Swift programs run children.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        // libev's module map plus the C shim for its watcher macros and timerfd.
        .target(name: "CRunLoopKitLibev"),
        // The platform layer: every system call of the library, behind small Swift surfaces
        // with `package` access (ARCHITECTURE.md, "Layers"). Not a product: what it declares
        // is the library's own.
        .target(name: "RunLoopKitPlatform", dependencies: ["CRunLoopKitLibev"]),
        // The backend layer: the libev and virtual backends, the wake grid and the cycle
        // clock, speaking plain values (nanoseconds, Wait, WakeWindow) with `package`
        // access, so that the compiler keeps it below the engine and the API (ARCHITECTURE.md,
        // "Layers"). Not a product.
        .target(name: "RunLoopKitBackend", dependencies: ["CRunLoopKitLibev", "RunLoopKitPlatform"]),
        .target(
            name: "RunLoopKit",
            dependencies: ["RunLoopKitBackend", "RunLoopKitPlatform"]
        ),
        .target(name: "RunLoopKitSVGPlot"),
        .target(name: "RunLoopKitTraceTimeline", dependencies: ["RunLoopKit", "RunLoopKitSVGPlot"]),
        .testTarget(name: "TraceTimelineTests", dependencies: ["RunLoopKit", "RunLoopKitTraceTimeline"]),
        // GLib's main loop (<glib.h>, <glib-unix.h>), found through pkg-config.
        .systemLibrary(
            name: "CRunLoopKitGLib",
            pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        .target(
            name: "RunLoopKitGLib",
            dependencies: ["RunLoopKit", "CRunLoopKitGLib"]
        ),
        .testTarget(
            name: "RunLoopKitGLibTests",
            dependencies: ["RunLoopKit", "RunLoopKitGLib", "CRunLoopKitGLib", "RunLoopKitTestSupport"]
        ),
        // GLib scenarios on the real main thread (EVRunLoop.main hosting GLib's default
        // context, attached to it), run by GLibMainThreadTests.
        .executableTarget(
            name: "glib-main-probe",
            dependencies: ["RunLoopKit", "RunLoopKitGLib", "CRunLoopKitGLib"],
            path: "Tests/GLibMainProbe"
        ),
        .testTarget(
            name: "GLibMainThreadTests",
            // The probe too, so that the tests find it built next to them.
            dependencies: ["glib-main-probe", "RunLoopKitExampleTesting"]
        ),
        .testTarget(name: "SVGPlotTests", dependencies: ["RunLoopKitSVGPlot"]),
        .target(
            name: "RunLoopKitMetrics",
            dependencies: [
                "RunLoopKit", "RunLoopKitPlatform",
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ]
        ),
        .testTarget(
            name: "RunLoopKitMetricsTests",
            dependencies: [
                "RunLoopKit", "RunLoopKitMetrics",
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ]
        ),
        .target(
            name: "RunLoopKitExperimental",
            dependencies: ["RunLoopKit"]
        ),
        .testTarget(
            name: "RunLoopKitExperimentalTests",
            dependencies: ["RunLoopKit", "RunLoopKitExperimental"]
        ),
        // What the end-to-end tests share: launching a built probe (or example) binary and
        // reading its output. Examples/Tests/ExampleTesting is a link to it.
        .target(
            name: "RunLoopKitExampleTesting",
            path: "Tests/RunLoopKitExampleTesting"
        ),
        // Main-loop scenarios (libdispatch's main queue, the main actor) on the real main
        // thread, run by MainThreadTests on EVRunLoop.main and on CFRunLoop's main loop.
        .executableTarget(
            name: "main-queue-probe",
            dependencies: ["RunLoopKit", "RunLoopKitExperimental"],
            path: "Tests/MainQueueProbe"
        ),
        // An async main with a loop on a thread of its own (issue 26's program as reported:
        // Swift 5 language mode, optimized even in a debug build), run by LoopThreadTests.
        .executableTarget(
            name: "loop-thread-probe",
            dependencies: ["RunLoopKit"],
            path: "Tests/LoopThreadProbe",
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-O"])]
        ),
        .testTarget(
            name: "LoopThreadTests",
            // The probe too, so that the tests find it built next to them.
            dependencies: ["loop-thread-probe", "RunLoopKitExampleTesting"]
        ),
        .testTarget(
            name: "MainThreadTests",
            // The probe too, so that the tests find it built next to them.
            dependencies: ["main-queue-probe", "RunLoopKitExampleTesting"]
        ),
        // What more than one test target shares (the TestingOnVirtualTime article's debouncer).
        .target(
            name: "RunLoopKitTestSupport",
            path: "Tests/RunLoopKitTestSupport"
        ),
        // Every Swift block of README.md and of the DocC catalogue, compiled (and where it can
        // be, run) as a snippet; a test checks that each block is one.
        .testTarget(
            name: "DocSnippetTests",
            dependencies: [
                "RunLoopKit", "RunLoopKitMetrics", "RunLoopKitTestSupport",
                .product(name: "Subprocess", package: "swift-subprocess"),
            ]
        ),
        .testTarget(
            name: "RunLoopKitTests",
            dependencies: [
                "RunLoopKit",
                "RunLoopKitBackend",
                "RunLoopKitTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .target(
            name: "RunLoopKitSystem",
            dependencies: ["RunLoopKit", systemPackage]
        ),
        .testTarget(
            name: "RunLoopKitSystemTests",
            dependencies: ["RunLoopKit", "RunLoopKitSystem", systemPackage]
        ),
        .target(
            name: "RunLoopKitServiceLifecycle",
            dependencies: ["RunLoopKit", serviceLifecycle]
        ),
        .testTarget(
            name: "RunLoopKitServiceLifecycleTests",
            dependencies: ["RunLoopKit", "RunLoopKitServiceLifecycle", serviceLifecycle]
        ),
    ],
    swiftLanguageModes: [.v6]
)
