// swift-tools-version: 6.1
import PackageDescription

// The examples in a package of their own, so that the library's manifest (the repository
// root) is only the library: `make demo` and `make test` at the root build and run them
// (`swift run --package-path Examples aligned-clock`), and .ci/run smoke-runs each.
// The library's products, from the root package, and the command lines' parser.
let runLoopKit: Target.Dependency = .product(name: "RunLoopKit", package: "RunLoopKit")
let svgPlot: Target.Dependency = .product(name: "RunLoopKitSVGPlot", package: "RunLoopKit")
let traceTimeline: Target.Dependency = .product(name: "RunLoopKitTraceTimeline", package: "RunLoopKit")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")

let package = Package(
    name: "Examples",
    platforms: [.macOS(.v15)],
    products: [
        // Two scenarios' logic libraries, for the GTK 4 example (gtk-timers, a package of its
        // own so that `make test` never needs GTK).
        .library(name: "TaskTimers", targets: ["TaskTimers"]),
        .library(name: "Stopwatch", targets: ["Stopwatch"]),
    ],
    dependencies: [
        // The library, by path: the repository root.
        // The trait Metrics: RunLoopKitMetrics, for the prometheus-metrics example.
        .package(name: "RunLoopKit", path: "..", traits: ["Metrics"]),
        // The examples' command lines.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The prometheus-metrics example: a loop's metrics in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // A run loop for someone who has never used one: README.md's first example.
        .executableTarget(
            name: "first-steps",
            dependencies: [runLoopKit],
            path: "first-steps",
            exclude: ["README.md"]
        ),
        // An async main with a loop on a thread of its own (EVRunLoop.startThread(name:)).
        .executableTarget(
            name: "loop-thread",
            dependencies: [runLoopKit],
            path: "loop-thread"
        ),
        // A tiny program that prints the activity sequence of a short real run.
        .executableTarget(
            name: "pass-trace",
            dependencies: [runLoopKit, traceTimeline],
            path: "pass-trace"
        ),
        // Runs a command with a timeout: its output through a descriptor source, its exit
        // through a child source (ChildProcesses.md).
        .executableTarget(
            name: "run-with-timeout",
            dependencies: [runLoopKit],
            path: "run-with-timeout"
        ),
        // What the examples share: stdout writes, terminal mode and keys, signals, statistics, JSON.
        .target(
            name: "ExampleSupport",
            dependencies: [runLoopKit, traceTimeline],
            path: "Support"
        ),
        // S0: a clock that ticks on whole seconds; naive, polling and aligned timers compared.
        .target(
            name: "AlignedClock",
            dependencies: [runLoopKit, "ExampleSupport", svgPlot],
            path: "aligned-clock/AlignedClock"
        ),
        .executableTarget(
            name: "aligned-clock",
            dependencies: [
                runLoopKit, "AlignedClock", "ExampleSupport",
                argumentParser,
            ],
            path: "aligned-clock/Main"
        ),
        .testTarget(
            name: "AlignedClockTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: [runLoopKit, "AlignedClock", "aligned-clock", "ExampleSupport", "ExampleTesting", svgPlot],
            path: "Tests/AlignedClockTests"
        ),
        // S1: a 100 Hz mm:ss.hh stopwatch computed from its start instant, versus counting.
        .target(
            name: "Stopwatch",
            dependencies: [runLoopKit, "ExampleSupport", svgPlot],
            path: "stopwatch/Stopwatch"
        ),
        .executableTarget(
            name: "stopwatch",
            dependencies: [
                runLoopKit, "Stopwatch", "ExampleSupport",
                argumentParser,
            ],
            path: "stopwatch/Main"
        ),
        .testTarget(
            name: "StopwatchTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: [runLoopKit, "Stopwatch", "stopwatch", "ExampleTesting", svgPlot],
            path: "Tests/StopwatchTests"
        ),
        // S2: one consistent "now" per pass; the Q&A's observer-based wakeDate next to the built-in one.
        .target(
            name: "WakeDate",
            dependencies: [runLoopKit, "ExampleSupport"],
            path: "wake-date/WakeDate"
        ),
        .executableTarget(
            name: "wake-date",
            dependencies: [
                runLoopKit, "WakeDate", "ExampleSupport",
                argumentParser,
            ],
            path: "wake-date/Main"
        ),
        .testTarget(
            name: "WakeDateTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: [runLoopKit, "WakeDate", "wake-date", "ExampleTesting"],
            path: "Tests/WakeDateTests"
        ),
        // S4: rows counting down to their due time, 0.1 s polling versus an aligned timer.
        .target(
            name: "TodoCountdown",
            dependencies: [runLoopKit, "ExampleSupport", svgPlot],
            path: "todo-countdown/TodoCountdown"
        ),
        .executableTarget(
            name: "todo-countdown",
            dependencies: [
                runLoopKit, "TodoCountdown", "ExampleSupport",
                argumentParser,
            ],
            path: "todo-countdown/Main"
        ),
        .testTarget(
            name: "TodoCountdownTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: [runLoopKit, "TodoCountdown", "todo-countdown", "ExampleSupport", "ExampleTesting", svgPlot],
            path: "Tests/TodoCountdownTests"
        ),
        // S3: a task list with live timers: modes, tolerance, a display link, the background.
        .target(
            name: "TaskTimers",
            dependencies: [runLoopKit, "ExampleSupport", svgPlot],
            path: "task-timers/TaskTimers"
        ),
        .executableTarget(
            name: "task-timers",
            dependencies: [
                runLoopKit, "TaskTimers", "ExampleSupport",
                argumentParser,
            ],
            path: "task-timers/Main"
        ),
        .testTarget(
            name: "TaskTimersTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: [runLoopKit, "TaskTimers", "task-timers", "ExampleTesting", svgPlot],
            path: "Tests/TaskTimersTests"
        ),
        // Reloads a key = value settings file each time it changes: a file source with a
        // tolerance; --demo edits the file in place and as an editor saves.
        .executableTarget(
            name: "config-reload",
            dependencies: [
                runLoopKit, "ExampleSupport",
                argumentParser,
            ],
            path: "config-reload",
            exclude: ["README.md"]
        ),
        // Prints the real loop's timer precision: aligned-second phase and 10 ms lateness.
        .executableTarget(
            name: "precision-probe",
            dependencies: [runLoopKit, "ExampleSupport"],
            path: "precision-probe"
        ),
        // The loop-thread example's end-to-end test.
        .testTarget(
            name: "LoopThreadExampleTests",
            // The executable too, so that the test finds it built next to it.
            dependencies: ["loop-thread", "ExampleTesting"],
            path: "Tests/LoopThreadExampleTests"
        ),
        // A loop's metrics exported through swift-prometheus, printed in the text format.
        .executableTarget(
            name: "prometheus-metrics",
            dependencies: [
                runLoopKit, .product(name: "RunLoopKitMetrics", package: "RunLoopKit"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "prometheus-metrics"
        ),
        .testTarget(
            name: "PrometheusMetricsTests",
            // The executable too, so that the end-to-end test finds it built next to the tests.
            dependencies: ["prometheus-metrics", "ExampleTesting"],
            path: "Tests/PrometheusMetricsTests"
        ),
        // What the example tests share: launching a built example binary and reading its
        // output. A link to the root's Tests/RunLoopKitExampleTesting, which the library's
        // probe tests use: one source, a target in each package.
        .target(
            name: "ExampleTesting",
            path: "Tests/ExampleTesting"
        ),
    ],
    swiftLanguageModes: [.v6]
)
