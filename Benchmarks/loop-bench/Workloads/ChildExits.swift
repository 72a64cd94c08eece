import CLibevBench
import Foundation
import RunLoopKit
import Subprocess
import Synchronization

/// Workload 14 (issue 27): spawn → exit-handler latency of `/bin/true` children, and what 10,000
/// more leave behind (zombies, descriptors). Every run is a process of its own, so that the leak
/// check counts that peer's children only. Foundation's `waitUntilExit` runs the loop in 50 ms
/// slices, so its latency is one run and its leak check stops at ``foundationLeakCount``;
/// swift-subprocess's rows sit in the Task.sleep column (run when `--peers` holds `task`).
enum ChildExits: Workload {
    static let name = "children"
    static let summary = "/bin/true children started one after another with posix_spawn (EVSource(childProcess:), ev_child on libev's default loop, Process.run + waitUntilExit); spawn → exit handler latency; zombies and descriptors left after 10,000 children. Each run a child process of its own."

    static let unavailable: [Peer: String] = [
        .dispatch: "no process source on Linux (DISPATCH_SOURCE_TYPE_PROC is Darwin's)",
        .nio: "no process API",
        .taskSleep: "no process API in the standard library (swift-subprocess: its own rows, in this column)",
        .timerSequence: "a timer sequence watches no process",
    ]

    /// Foundation's leak check: 1,000 children at ~50 ms each (10,000 would take 8 minutes).
    static let foundationLeakCount = 1_000

    /// The child argument that selects swift-subprocess (not a ``Peer``).
    static let subprocessKey = "subprocess"

    static func measure(_ plan: Plan) -> [Row] {
        let pairs = Pairs.run(name, plan: plan, arguments: ["latency", String(plan.childSamples)])
        var latencies: [Peer: [Double]] = [:]
        if plan.peers.contains(.foundation) {
            latencies[.foundation] = Children.figures(name, [Peer.foundation.key, "latency", String(plan.childSamples)], expected: 2)
        }
        let subprocess = plan.peers.contains(.taskSleep)
            ? (0..<plan.pairs).map { _ in Children.figures(name, [subprocessKey, "latency", String(plan.childSamples)], expected: 2) }
            : []
        var leaks: [Peer: [Double]] = [:]
        for peer in [Peer.runLoopKit, .libev, .foundation] where plan.peers.contains(peer) {
            let count = peer == .foundation ? min(plan.childLeakCount, foundationLeakCount) : plan.childLeakCount
            leaks[peer] = Children.figures(name, [peer.key, "leak", String(count)], expected: 2)
        }
        let n = "\(plan.childSamples.grouped) sequential /bin/true"
        var rows = ["median", "p99"].enumerated().flatMap { figure, statistic in
            let row = Row.make(name, "spawn → exit handler latency \(statistic), \(n)", unit: "µs",
                               values: latencies.mapValues { [$0[figure]] }, unavailable: unavailable)
                .paired(pairs, figure: figure)
            return [row, subprocessRow(statistic, n, subprocess.map { $0[figure] }, beside: row)]
        }
        let met: Bool? = if let libev = rows[0].ratio(to: .libev), let foundation = rows[0].ratio(to: .foundation),
                            let swiftSubprocess = rows[1].ratio(to: .taskSleep) { libev <= 1.5 && foundation < 1 && swiftSubprocess < 1 } else { nil }
        rows[0] = rows[0].withGoal("≤ 1.5× libev, < Foundation, < swift-subprocess", met: met)
        let m = "after \(plan.childLeakCount.grouped) children"
            + (plan.childLeakCount > foundationLeakCount ? " (Foundation: \(foundationLeakCount.grouped))" : "")
        let leakRows = [("children left unreaped \(m)", "zombies"), ("descriptors left open \(m)", "fds")].enumerated().map { figure, metric in
            Row.make(name, metric.0, unit: metric.1, values: leaks.mapValues { [$0[figure]] }, unavailable: unavailable)
                .withGoal("0") { $0.median == 0 }
        }
        return [rows[0], rows[2], rows[1], rows[3]] + leakRows
    }

    /// swift-subprocess's row for `statistic`: its figures in the Task.sleep column, beside
    /// RunLoopKit's cell of `row`, for the ratio.
    private static func subprocessRow(_ statistic: String, _ n: String, _ values: [Double], beside row: Row) -> Row {
        var others = Peer.allBut(.runLoopKit, reason: "swift-subprocess's own row: its figure is in the Task.sleep column")
        others[.taskSleep] = values.isEmpty ? "left out by --peers (task)" : nil
        var subprocessRow = Row.make(
            name, "swift-subprocess 1.0.2 (Task.sleep column): run(.path(\"/bin/true\"), output: .discarded) "
                + "call → return latency \(statistic), \(n)",
            unit: "µs", values: values.isEmpty ? [:] : [.taskSleep: values], unavailable: others)
        subprocessRow.cells[.runLoopKit] = row.cells[.runLoopKit]
        return subprocessRow
    }

    /// A child: `[peer key or ``subprocessKey``, "latency" or "leak", count]`: the median and
    /// p99 (µs), or the zombies and descriptors left by `count` more children after one (which
    /// makes what a peer keeps for good, such as libev's default loop).
    static func child(_ arguments: [String]) {
        let peer = arguments.first.flatMap { Peer(key: $0) }
        guard arguments.count == 3, peer != nil || arguments[0] == subprocessKey, let count = Int(arguments[2]),
              arguments[1] == "latency" || (arguments[1] == "leak" && peer != nil) else {
            fatalError("loop-bench children child: expected a peer (or subprocess), latency or leak, and a count, got \(arguments)")
        }
        guard let peer else { return Children.reportLatencies(count: count) { subprocess(count: $0) } }
        if arguments[1] == "latency" { return Children.reportLatencies(count: count) { latencies(peer, count: $0) } }
        _ = latencies(peer, count: 1)
        let before = openDescriptors()
        _ = latencies(peer, count: count)
        Pairs.report([Double(reapLeftovers()), Double(openDescriptors() - before)])
    }

    /// `count` children, one after another, on `peer`: spawn → handler latency of each (ns).
    static func latencies(_ peer: Peer, count: Int) -> [Double] {
        switch peer {
        case .runLoopKit:
            return onFreshThread { runLoopKit(count: count) }
        case .libev:
            var latencies = [Int64](repeating: 0, count: count)
            let status = lb_child_exits(Int32(count), &latencies)
            precondition(status == 0, "lb_child_exits failed (errno \(errno))")
            return latencies.map(Double.init)
        case .foundation:
            return foundation(count: count)
        default:
            fatalError("loop-bench children: \(peer.rawValue) watches no process")
        }
    }

    /// When the handler ran (monotonic ns); set on the loop's thread, read after the run.
    private final class Stamp: Sendable {
        let nanos = Atomic<Int64>(0)
    }

    private static func runLoopKit(count: Int) -> [Double] {
        let loop = EVRunLoop.current
        let stamp = Stamp()
        return (0..<count).map { _ in
            let start = lb_monotonic_ns()
            var pid: pid_t = 0
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            let status = posix_spawn(&pid, "/bin/true", nil, nil, argv, environ)
            free(argv[0])
            precondition(status == 0, "loop-bench children: posix_spawn failed (\(status))")
            let source = try! EVSource(childProcess: pid) { source in
                stamp.nanos.store(lb_monotonic_ns(), ordering: .relaxed)
                precondition(source.childExit == .exited(0), "loop-bench children: /bin/true ended \(String(describing: source.childExit))")
            }
            loop.add(source, forMode: .default)
            let result = loop.run(mode: .default, for: .seconds(30), returnAfterSourceHandled: true)
            precondition(result == .handledSource, "loop-bench children: the exit was not seen (\(result))")
            return Double(stamp.nanos.load(ordering: .relaxed) - start)
        }
    }

    private static func foundation(count: Int) -> [Double] {
        let executable = URL(fileURLWithPath: "/bin/true")
        return (0..<count).map { _ in
            let process = Process()
            process.executableURL = executable
            let start = lb_monotonic_ns()
            do { try process.run() } catch { fatalError("loop-bench children: Process.run: \(error)") }
            process.waitUntilExit()
            let latency = Double(lb_monotonic_ns() - start)
            precondition(process.terminationStatus == 0, "loop-bench children: /bin/true exited \(process.terminationStatus)")
            return latency
        }
    }

    /// `count` swift-subprocess runs of `/bin/true`, awaited one after another: call → return
    /// latency of each (ns).
    private static func subprocess(count: Int) -> [Double] {
        blockingAwait {
            var latencies: [Double] = []
            latencies.reserveCapacity(count)
            for _ in 0..<count {
                let start = lb_monotonic_ns()
                let result = try! await run(.path("/bin/true"), output: .discarded)
                latencies.append(Double(lb_monotonic_ns() - start))
                precondition(result.terminationStatus == .exited(0),
                             "loop-bench children: /bin/true ended \(result.terminationStatus)")
            }
            return latencies
        }
    }

    /// Reaps every child left (each a zombie the peer did not reap) and counts them; waits
    /// up to a second for children still running.
    private static func reapLeftovers() -> Int {
        var zombies = 0
        let deadline = lb_monotonic_ns() + 1_000_000_000
        while true {
            let pid = waitpid(-1, nil, WNOHANG)
            if pid > 0 {
                zombies += 1
            } else if pid == 0, lb_monotonic_ns() < deadline {
                usleep(1_000)
            } else {
                return zombies
            }
        }
    }

    /// How many descriptors the process has open (the entries of /proc/self/fd).
    private static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }
}
