import CLibevBench
import Foundation
import RunLoopKit

/// Workload 15 (issue 27): a watched file: write → handler latency of paced one-byte appends,
/// and the callouts for a burst of appends (RunLoopKit with a 50 ms tolerance; libev's
/// `ev_stat` has none). RunLoopKit and libev in interleaved pairs of processes (``Pairs``).
enum FileChanges: Workload {
    static let name = "files"
    static let summary = "a watched file in a temporary directory (EVSource(watching:), ev_stat at its default interval: inotify and a stat per event); write → handler latency of one-byte appends made one at a time by another thread, and the callouts for a burst of 1,000 appends (RunLoopKit with a 50 ms tolerance, ev_stat without). Interleaved pairs of child processes."

    static let unavailable: [Peer: String] = [
        .foundation: "no file watching in swift-corelibs-foundation",
        .dispatch: "no vnode source on Linux (DISPATCH_SOURCE_TYPE_VNODE is Darwin's)",
        .nio: "no file-watching API",
        .taskSleep: "no file-watching API in the standard library",
        .timerSequence: "a timer sequence watches no file",
    ]

    /// The pause after each handled write before the next one (s).
    static let gap = 0.0002
    /// Writes per burst, and the burst's tolerance.
    static let burstWrites = 1_000
    static let burstTolerance: Duration = .milliseconds(50)
    /// How long the loop runs from the start of a burst (s): the burst takes a few ms, the
    /// hold 50 ms.
    static let burstWindow = 0.3

    static func measure(_ plan: Plan) -> [Row] {
        let latency = Pairs.run(name, plan: plan, arguments: ["latency", String(plan.fileSamples)])
        let burst = Pairs.run(name, plan: plan, arguments: ["burst", String(burstWrites)])
        let n = "\(plan.fileSamples.grouped) appends of one byte, one at a time"
        let medianRow = Row.make(name, "write → handler latency median, \(n)", unit: "µs", values: [:], unavailable: unavailable)
            .paired(latency, figure: 0)
            .withRatioGoal("≤ 1.5× libev", to: .libev, bound: 1.5)
        let p99Row = Row.make(name, "write → handler latency p99, \(n)", unit: "µs", values: [:], unavailable: unavailable)
            .paired(latency, figure: 1)
        var burstRow = Row.make(
            name, "callouts for a burst of \(burstWrites.grouped) writes, 50 ms tolerance (libev: ev_stat, no tolerance)",
            unit: "callouts", better: .neither, values: [:], unavailable: unavailable)
            .paired(burst, figure: 0)
            .withGoal("1–3 callouts", met: burst.runLoopKit.isEmpty ? nil : burst.runLoopKit.allSatisfy { (1...3).contains($0[0]) })
        burstRow.pairRatios = nil  // a count against a count without tolerance: no ratio goal
        return [medianRow, p99Row, burstRow]
    }

    /// A child of the pairs: `[peer key, "latency" or "burst", count]`. Latency: the median
    /// and p99 (µs) of `count` appends. Burst: the callouts for a burst of `count` writes.
    static func child(_ arguments: [String]) {
        guard arguments.count == 3, let peer = Peer(key: arguments[0]), [.runLoopKit, .libev].contains(peer),
              let count = Int(arguments[2]), ["latency", "burst"].contains(arguments[1]) else {
            fatalError("loop-bench files child: expected runloopkit or libev, latency or burst, and a count, got \(arguments)")
        }
        if arguments[1] == "latency" {
            Children.reportLatencies(count: count) { latencies(peer, count: $0) }
        } else {
            Pairs.report([Double(burstCallouts(peer, writes: count))])
        }
    }

    /// `count` appends, one at a time, to a fresh watched file: write → handler latency of
    /// each (ns).
    static func latencies(_ peer: Peer, count: Int) -> [Double] {
        withWatchedFile { path in
            if peer == .runLoopKit { return onFreshThread { runLoopKitLatencies(path: path, count: count) } }
            var latencies = [Int64](repeating: 0, count: count)
            let status = lb_file_changes(path, Int32(count), gap, &latencies)
            precondition(status == 0, "lb_file_changes failed (errno \(errno))")
            return latencies.map(Double.init)
        }
    }

    /// The callouts for a burst of `writes` appends to a fresh watched file.
    static func burstCallouts(_ peer: Peer, writes: Int) -> Int {
        withWatchedFile { path in
            if peer == .runLoopKit { return onFreshThread { runLoopKitBurst(path: path, writes: writes) } }
            var callouts: Int64 = 0
            let status = lb_file_burst(path, Int32(writes), burstWindow, &callouts)
            precondition(status == 0, "lb_file_burst failed (errno \(errno))")
            return Int(callouts)
        }
    }

    private static func runLoopKitLatencies(path: String, count: Int) -> [Double] {
        let loop = EVRunLoop.current
        let probe = WakeProbe(samples: count, gap: gap)
        let source = try! EVSource(watching: path, for: .modified) { source in
            if probe.handle() { source.invalidate() }
        }
        loop.add(source, forMode: .default)
        let descriptor = openForAppend(path)
        probe.startSender { append(descriptor) }
        let result = loop.run(mode: .default, for: .seconds(60))
        precondition(result == .finished, "loop-bench files: \(probe.handled.load(ordering: .relaxed)) of \(count) writes seen (\(result))")
        probe.joinSender()
        close(descriptor)
        return probe.latencies.map(Double.init)
    }

    private static func runLoopKitBurst(path: String, writes: Int) -> Int {
        let loop = EVRunLoop.current
        let callouts = AtomicCounter()
        let source = try! EVSource(watching: path, for: .modified, tolerance: burstTolerance) { _ in
            callouts.increment()
        }
        loop.add(source, forMode: .default)
        let descriptor = openForAppend(path)
        let written = DispatchSemaphore(value: 0)
        Thread {
            for _ in 0..<writes { append(descriptor) }
            written.signal()
        }.start()
        loop.run(mode: .default, for: .seconds(burstWindow))
        source.invalidate()
        written.wait()
        close(descriptor)
        return callouts.value
    }

    private static func openForAppend(_ path: String) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        precondition(descriptor >= 0, "loop-bench files: open \(path) failed (errno \(errno))")
        return descriptor
    }

    /// Appends one byte to `descriptor`.
    private static func append(_ descriptor: Int32) {
        var byte = UInt8(ascii: "x")
        precondition(write(descriptor, &byte, 1) == 1, "loop-bench files: write failed (errno \(errno))")
    }

    /// Runs `body` with the path of an empty file in a new temporary directory, removed after.
    private static func withWatchedFile<Result>(_ body: (String) -> Result) -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("loop-bench-files-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/watched.conf"
        precondition(FileManager.default.createFile(atPath: path, contents: nil), "loop-bench files: cannot create \(path)")
        return body(path)
    }
}
