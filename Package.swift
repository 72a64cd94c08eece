// swift-tools-version: 6.1
import PackageDescription

/// swift-system and swift-service-lifecycle, only under their traits.
let systemPackage = Target.Dependency.product(
    name: "SystemPackage", package: "swift-system", condition: .when(traits: ["SwiftSystem"]))
let serviceLifecycle = Target.Dependency.product(
    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"]))

let package = Package(
    name: "RunLoopKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "RunLoopKit", targets: ["RunLoopKit"]),
        // Opt-in, on the toolchain's experimental executor SPIs: EVRunLoop.main as the main
        // actor's executor, and Task.sleep on a loop's coalescing timers.
        .library(name: "RunLoopKitExperimental", targets: ["RunLoopKitExperimental"]),
        // A small dependency-free SVG line-chart writer: the examples' --plot, and the benchmark.
        .library(name: "SVGPlot", targets: ["SVGPlot"]),
        // A trace drawn as an SVG timeline of its passes: pass-trace --svg, the examples'
        // --trace-svg. RunLoopKit itself draws nothing.
        .library(name: "TraceTimeline", targets: ["TraceTimeline"]),
        // GLib both ways: a GMainContext hosted in a loop's modes, a loop attached to a
        // GMainContext as a GSource. Only this product needs GLib.
        .library(name: "RunLoopKitGLib", targets: ["RunLoopKitGLib"]),
        // A loop's health metrics reported through swift-metrics. Only this product needs it.
        .library(name: "RunLoopKitMetrics", targets: ["RunLoopKitMetrics"]),
        // Two scenarios' logic libraries, for the GTK 4 example (Examples/gtk-timers), a
        // package of its own so that `make test` never needs GTK.
        .library(name: "TaskTimers", targets: ["TaskTimers"]),
        .library(name: "Stopwatch", targets: ["Stopwatch"]),
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
        .trait(name: "SwiftSystem", description: "The RunLoopKitSystem product: FileDescriptor, FilePath and Errno forms (apple/swift-system)."),
        .trait(name: "ServiceLifecycle", description: "The RunLoopKitServiceLifecycle product: a loop as a swift-service-lifecycle Service."),
    ],
    dependencies: [
        // The examples' command lines (the benchmark is its own package: Benchmarks/).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Property tests of the timer queue under virtual time.
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // `make docs`: the DocC catalogue (a command plugin; nothing of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // RunLoopKitMetrics: the convention of Swift servers for metrics (swift-prometheus
        // exports it); its MetricsTestKit reads what the tests reported.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // RunLoopKitSystem: FileDescriptor and Errno, as swift-subprocess and servers pass them.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // RunLoopKitServiceLifecycle: how Swift servers start and stop (SIGTERM).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The child-process recipe (ChildProcesses.md): how Swift programs run children.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        // The prometheus-metrics example: a loop's metrics in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // libev's module map plus the C shim for its watcher macros and timerfd.
        .target(name: "CLibev"),
        .target(
            name: "RunLoopKit",
            dependencies: ["CLibev"]
        ),
        .target(name: "SVGPlot"),
        .target(name: "TraceTimeline", dependencies: ["RunLoopKit", "SVGPlot"]),
        .testTarget(name: "TraceTimelineTests", dependencies: ["RunLoopKit", "TraceTimeline"]),
        // GLib's main loop (<glib.h>, <glib-unix.h>), found through pkg-config.
        .systemLibrary(
            name: "CGLib",
            pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        .target(
            name: "RunLoopKitGLib",
            dependencies: ["RunLoopKit", "CGLib"]
        ),
        .testTarget(
            name: "RunLoopKitGLibTests",
            dependencies: ["RunLoopKit", "RunLoopKitGLib", "CGLib"]
        ),
        // GLib scenarios on the real main thread (EVRunLoop.main hosting GLib's default
        // context, attached to it), run by GLibMainThreadTests.
        .executableTarget(
            name: "glib-main-probe",
            dependencies: ["RunLoopKit", "RunLoopKitGLib", "CGLib"],
            path: "Tests/GLibMainProbe"
        ),
        .testTarget(
            name: "GLibMainThreadTests",
            // The probe too, so that the tests find it built next to them.
            dependencies: ["glib-main-probe", "ExampleTesting"]
        ),
        .testTarget(name: "SVGPlotTests", dependencies: ["SVGPlot"]),
        .target(
            name: "RunLoopKitMetrics",
            dependencies: ["RunLoopKit", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .testTarget(
            name: "RunLoopKitMetricsTests",
            dependencies: [
                "RunLoopKit", "RunLoopKitMetrics",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
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
        // A run loop for someone who has never used one: README.md's first example.
        .executableTarget(
            name: "first-steps",
            dependencies: ["RunLoopKit"],
            path: "Examples/first-steps",
            exclude: ["README.md"]
        ),
        // An async main with a loop on a thread of its own (EVRunLoop.startThread(name:)).
        .executableTarget(
            name: "loop-thread",
            dependencies: ["RunLoopKit"],
            path: "Examples/loop-thread"
        ),
        // A tiny program that prints the activity sequence of a short real run.
        .executableTarget(
            name: "pass-trace",
            dependencies: ["RunLoopKit", "TraceTimeline"],
            path: "Examples/pass-trace"
        ),
        // Runs a command with a timeout: its output through a descriptor source, its exit
        // through a child source (ChildProcesses.md).
        .executableTarget(
            name: "run-with-timeout",
            dependencies: ["RunLoopKit"],
            path: "Examples/run-with-timeout"
        ),
        // What the examples share: stdout writes, terminal mode and keys, signals, statistics, JSON.
        .target(
            name: "ExampleSupport",
            dependencies: ["RunLoopKit", "TraceTimeline"],
            path: "Examples/Support"
        ),
        // What the example tests share: launching a built example binary and reading its output.
        .target(
            name: "ExampleTesting",
            path: "Tests/ExampleTesting"
        ),
        // S0: a clock that ticks on whole seconds; naive, polling and aligned timers compared.
        .target(
            name: "AlignedClock",
            dependencies: ["RunLoopKit", "ExampleSupport", "SVGPlot"],
            path: "Examples/aligned-clock/AlignedClock"
        ),
        .executableTarget(
            name: "aligned-clock",
            dependencies: [
                "RunLoopKit", "AlignedClock", "ExampleSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/aligned-clock/Main"
        ),
        .testTarget(
            name: "AlignedClockTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: ["RunLoopKit", "AlignedClock", "aligned-clock", "ExampleSupport", "ExampleTesting", "SVGPlot"]
        ),
        // S1: a 100 Hz mm:ss.hh stopwatch computed from its start instant, versus counting.
        .target(
            name: "Stopwatch",
            dependencies: ["RunLoopKit", "ExampleSupport", "SVGPlot"],
            path: "Examples/stopwatch/Stopwatch"
        ),
        .executableTarget(
            name: "stopwatch",
            dependencies: [
                "RunLoopKit", "Stopwatch", "ExampleSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/stopwatch/Main"
        ),
        .testTarget(
            name: "StopwatchTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: ["RunLoopKit", "Stopwatch", "stopwatch", "ExampleTesting", "SVGPlot"]
        ),
        // S2: one consistent "now" per pass; the Q&A's observer-based wakeDate next to the built-in one.
        .target(
            name: "WakeDate",
            dependencies: ["RunLoopKit", "ExampleSupport"],
            path: "Examples/wake-date/WakeDate"
        ),
        .executableTarget(
            name: "wake-date",
            dependencies: [
                "RunLoopKit", "WakeDate", "ExampleSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/wake-date/Main"
        ),
        .testTarget(
            name: "WakeDateTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: ["RunLoopKit", "WakeDate", "wake-date", "ExampleTesting"]
        ),
        // S4: rows counting down to their due time, 0.1 s polling versus an aligned timer.
        .target(
            name: "TodoCountdown",
            dependencies: ["RunLoopKit", "ExampleSupport", "SVGPlot"],
            path: "Examples/todo-countdown/TodoCountdown"
        ),
        .executableTarget(
            name: "todo-countdown",
            dependencies: [
                "RunLoopKit", "TodoCountdown", "ExampleSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/todo-countdown/Main"
        ),
        .testTarget(
            name: "TodoCountdownTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: ["RunLoopKit", "TodoCountdown", "todo-countdown", "ExampleSupport", "ExampleTesting", "SVGPlot"]
        ),
        // S3: a task list with live timers: modes, tolerance, a display link, the background.
        .target(
            name: "TaskTimers",
            dependencies: ["RunLoopKit", "ExampleSupport", "SVGPlot"],
            path: "Examples/task-timers/TaskTimers"
        ),
        .executableTarget(
            name: "task-timers",
            dependencies: [
                "RunLoopKit", "TaskTimers", "ExampleSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/task-timers/Main"
        ),
        .testTarget(
            name: "TaskTimersTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: ["RunLoopKit", "TaskTimers", "task-timers", "ExampleTesting", "SVGPlot"]
        ),
        // Reloads a key = value settings file each time it changes: a file source with a
        // tolerance; --demo edits the file in place and as an editor saves.
        .executableTarget(
            name: "config-reload",
            dependencies: [
                "RunLoopKit", "ExampleSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/config-reload",
            exclude: ["README.md"]
        ),
        // Prints the real loop's timer precision: aligned-second phase and 10 ms lateness.
        .executableTarget(
            name: "precision-probe",
            dependencies: ["RunLoopKit", "ExampleSupport"],
            path: "Examples/precision-probe"
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
            // The probe and the loop-thread example too, so that the tests find them built
            // next to them.
            dependencies: ["loop-thread-probe", "loop-thread", "ExampleTesting"]
        ),
        .testTarget(
            name: "MainThreadTests",
            // The probe too, so that the tests find it built next to them.
            dependencies: ["main-queue-probe", "ExampleTesting"]
        ),
        // What more than one test target shares (the TestingOnVirtualTime article's debouncer).
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport"
        ),
        // Every Swift block of README.md and of the DocC catalogue, compiled (and where it can
        // be, run) as a snippet; a test checks that each block is one.
        .testTarget(
            name: "DocSnippetTests",
            dependencies: [
                "RunLoopKit", "RunLoopKitMetrics", "TestSupport",
                .product(name: "Subprocess", package: "swift-subprocess"),
            ]
        ),
        .testTarget(
            name: "RunLoopKitTests",
            dependencies: [
                "RunLoopKit",
                "TestSupport",
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
        // A loop's metrics exported through swift-prometheus, printed in the text format.
        .executableTarget(
            name: "prometheus-metrics",
            dependencies: [
                "RunLoopKit", "RunLoopKitMetrics",
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Examples/prometheus-metrics"
        ),
        .testTarget(
            name: "PrometheusMetricsTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: ["prometheus-metrics", "ExampleTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
