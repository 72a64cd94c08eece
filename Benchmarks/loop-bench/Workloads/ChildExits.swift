import CLibevBench
import Foundation
import RunLoopKit
import Subprocess
import Synchronization

/// Workload 14 (issue 27): child process exits. `/bin/true` children started one after
/// another with `posix_spawn`; latency from just before the spawn to the handler that sees
/// the exit (the spawn, the child's run and its exit are the same work for every peer; what
/// differs is how the exit reaches the handler). Then the leak check: after that many more
/// children, how many are left unreaped (zombies) and how many descriptors more are open.
///
/// RunLoopKit `EVSource(childProcess:)` (a pidfd), libev `ev_child` on its default loop,
/// Foundation `Process.run()` + `waitUntilExit()`. Every run is a child process of its own
/// (RunLoopKit and libev in interleaved pairs), so that the leak check counts that peer's
/// children only and libev's SIGCHLD handler stays in its own process.
///
/// swift-corelibs-foundation's `waitUntilExit` runs the run loop in 50 ms slices until the
/// child is gone, so each Foundation child takes about 50 ms: Foundation's latency is one
/// run (not `repetitions`), and its leak check stops at ``foundationLeakCount`` children.
///
/// swift-subprocess is not one of the ``Peer`` columns: it has rows of its own (median and
/// p99), its figure in the Task.sleep column, the Swift-concurrency peer, and it runs when
/// `--peers` holds `task`. Each of its children is `run(.path("/bin/true"), output:
/// .discarded)` awaited, one after another; latency from just before the call to its return.
/// It runs `pairs` times, each a child process of its own, after the RunLoopKit/libev pairs.
enum ChildExits {
    static let name = "children"

    static let unavailable: [Peer: String] = [
        .dispatch: "no process source on Linux (DISPATCH_SOURCE_TYPE_PROC is Darwin's)",
        .nio: "no process API",
        .taskSleep: "no process API in the standard library (swift-subprocess: its own rows, in this column)",
        .timerSequence: "a timer sequence watches no process",
    ]

    /// The peers measured, each in child processes of its own.
    static let measured: [Peer] = [.runLoopKit, .libev, .foundation]

    /// Foundation's leak check: 1,000 children at ~50 ms each (10,000 would take 8 minutes).
    static let foundationLeakCount = 1_000

    /// The child argument that selects swift-subprocess (not a ``Peer``).
    static let subprocessKey = "subprocess"

    static func measure(_ plan: Plan) -> [Row] {
        let pairs = Pairs.run(name, plan: plan,
                              arguments: ["latency", String(plan.childSamples)])
        var medians: [Peer: [Double]] = [:]
        var p99s: [Peer: [Double]] = [:]
        if plan.peers.contains(.foundation) {
            let figures = childFigures(Peer.foundation.key, "latency", plan.childSamples)
            medians[.foundation] = [figures[0]]
            p99s[.foundation] = [figures[1]]
        }
        var subprocess: [[Double]] = []
        if plan.peers.contains(.taskSleep) {
            for _ in 0..<plan.pairs {
                subprocess.append(childFigures(subprocessKey, "latency", plan.childSamples))
            }
        }
        var zombies: [Peer: [Double]] = [:]
        var descriptors: [Peer: [Double]] = [:]
        for peer in measured where plan.peers.contains(peer) {
            let count = peer == .foundation ? min(plan.childLeakCount, foundationLeakCount) : plan.childLeakCount
            let figures = childFigures(peer.key, "leak", count)
            zombies[peer] = [figures[0]]
            descriptors[peer] = [figures[1]]
        }
        let n = "\(plan.childSamples.grouped) sequential /bin/true"
        var medianRow = Row.make(name, "spawn → exit handler latency median, \(n)", unit: "µs",
                                 values: medians, unavailable: unavailable)
            .paired(pairs, figure: 0)
        let p99Row = Row.make(name, "spawn → exit handler latency p99, \(n)", unit: "µs",
                              values: p99s, unavailable: unavailable)
            .paired(pairs, figure: 1)
        let subprocessMedianRow = subprocessRow("median", n, subprocess.map { $0[0] }, beside: medianRow)
        let subprocessP99Row = subprocessRow("p99", n, subprocess.map { $0[1] }, beside: p99Row)
        medianRow.goal = "≤ 1.5× libev, < Foundation, < swift-subprocess"
        if let libevRatio = medianRow.ratio(to: .libev), let foundationRatio = medianRow.ratio(to: .foundation),
           let subprocessRatio = subprocessMedianRow.ratio(to: .taskSleep) {
            medianRow.goalMet = libevRatio <= 1.5 && foundationRatio < 1 && subprocessRatio < 1
        }
        let m = "after \(plan.childLeakCount.grouped) children"
            + (plan.childLeakCount > foundationLeakCount ? " (Foundation: \(foundationLeakCount.grouped))" : "")
        var zombieRow = Row.make(name, "children left unreaped \(m)", unit: "zombies", values: zombies,
                                 unavailable: unavailable)
        zombieRow.goal = "0"
        zombieRow.goalMet = zombieRow.cells[.runLoopKit]?.summary.map { $0.median == 0 }
        var descriptorRow = Row.make(name, "descriptors left open \(m)", unit: "fds", values: descriptors,
                                     unavailable: unavailable)
        descriptorRow.goal = "0"
        descriptorRow.goalMet = descriptorRow.cells[.runLoopKit]?.summary.map { $0.median == 0 }
        return [medianRow, p99Row, subprocessMedianRow, subprocessP99Row, zombieRow, descriptorRow]
    }

    /// swift-subprocess's row for `statistic` (median or p99): its figures (one per run) in
    /// the Task.sleep column, beside RunLoopKit's cell of `row`, so that the row shows
    /// RunLoopKit ÷ swift-subprocess.
    private static func subprocessRow(_ statistic: String, _ n: String, _ values: [Double], beside row: Row) -> Row {
        var others = Dictionary(uniqueKeysWithValues: Peer.others.map {
            ($0, "swift-subprocess's own row: its figure is in the Task.sleep column")
        })
        others[.taskSleep] = nil
        var subprocessRow = Row.make(
            name, "swift-subprocess 1.0.2 (Task.sleep column): run(.path(\"/bin/true\"), output: .discarded) "
                + "call → return latency \(statistic), \(n)",
            unit: "µs", values: values.isEmpty ? [:] : [.taskSleep: values], unavailable: others)
        if values.isEmpty { subprocessRow.cells[.taskSleep] = .unavailable(reason: "left out by --peers (task)") }
        subprocessRow.cells[.runLoopKit] = row.cells[.runLoopKit]
        return subprocessRow
    }

    /// What one child process of the peer `key` (a ``Peer`` key or ``subprocessKey``) printed
    /// for `what` (`latency` or `leak`) over `count` children.
    private static func childFigures(_ key: String, _ what: String, _ count: Int) -> [Double] {
        let output = Children.run(name) { _ in [key, what, String(count)] }[0]
        let figures = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard figures.count == 2 else {
            fatalError("loop-bench: a \(name) child for \(key) printed \(output.debugDescription)")
        }
        return figures
    }

    /// A child: `[peer key, "latency" or "leak", count]`. Latency: a short untimed run
    /// first (it warms the process), then prints the median and p99 (µs). Leak: after one
    /// child (which creates what a peer keeps for good, such as libev's default loop), prints
    /// the zombies and the extra descriptors left after `count` more. swift-subprocess
    /// (``subprocessKey``) measures latency only.
    static func child(_ arguments: [String]) {
        if arguments.count == 3, arguments[0] == subprocessKey, arguments[1] == "latency", let count = Int(arguments[2]) {
            _ = subprocess(count: 20)
            let summary = Summary(subprocess(count: count))
            Pairs.report([summary.median / 1e3, summary.percentile(99) / 1e3])
            return
        }
        guard arguments.count == 3, let peer = Peer(key: arguments[0]), let count = Int(arguments[2]),
              ["latency", "leak"].contains(arguments[1]) else {
            fatalError("loop-bench children child: expected a peer (or subprocess), latency or leak, and a count, got \(arguments)")
        }
        if arguments[1] == "latency" {
            _ = latencies(peer, count: 20)
            let summary = Summary(latencies(peer, count: count))
            Pairs.report([summary.median / 1e3, summary.percentile(99) / 1e3])
        } else {
            _ = latencies(peer, count: 1)
            let before = openDescriptors()
            _ = latencies(peer, count: count)
            Pairs.report([Double(reapLeftovers()), Double(openDescriptors() - before)])
        }
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
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for _ in 0..<count {
            let start = lb_monotonic_ns()
            let pid = spawnTrue()
            let source = try! EVSource(childProcess: pid) { source in
                stamp.nanos.store(lb_monotonic_ns(), ordering: .relaxed)
                precondition(source.childExit == .exited(0), "loop-bench children: /bin/true ended \(String(describing: source.childExit))")
            }
            loop.add(source, forMode: .default)
            let result = loop.run(mode: .default, for: .seconds(30), returnAfterSourceHandled: true)
            precondition(result == .handledSource, "loop-bench children: the exit was not seen (\(result))")
            latencies.append(Double(stamp.nanos.load(ordering: .relaxed) - start))
        }
        return latencies
    }

    private static func foundation(count: Int) -> [Double] {
        let executable = URL(fileURLWithPath: "/bin/true")
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for _ in 0..<count {
            let process = Process()
            process.executableURL = executable
            let start = lb_monotonic_ns()
            do { try process.run() } catch { fatalError("loop-bench children: Process.run: \(error)") }
            process.waitUntilExit()
            latencies.append(Double(lb_monotonic_ns() - start))
            precondition(process.terminationStatus == 0, "loop-bench children: /bin/true exited \(process.terminationStatus)")
        }
        return latencies
    }

    /// `count` swift-subprocess runs of `/bin/true`, awaited one after another: call → return
    /// latency of each (ns).
    private static func subprocess(count: Int) -> [Double] {
        blockingAwait {
            var latencies: [Double] = []
            latencies.reserveCapacity(count)
            for _ in 0..<count {
                let start = lb_monotonic_ns()
                let result: ExecutionResult<Void, DiscardedOutput, DiscardedOutput>
                do {
                    result = try await run(.path("/bin/true"), output: .discarded)
                } catch {
                    fatalError("loop-bench children: swift-subprocess run: \(error)")
                }
                latencies.append(Double(lb_monotonic_ns() - start))
                precondition(result.terminationStatus == .exited(0),
                             "loop-bench children: /bin/true ended \(result.terminationStatus)")
            }
            return latencies
        }
    }

    /// Starts `/bin/true` with `posix_spawn`.
    private static func spawnTrue() -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { free(argv[0]) }
        let status = posix_spawn(&pid, "/bin/true", nil, nil, argv, environ)
        precondition(status == 0, "loop-bench children: posix_spawn failed (\(status))")
        return pid
    }

    /// Reaps every child left (each a zombie the peer did not reap) and counts them; waits
    /// up to a second for children still running.
    private static func reapLeftovers() -> Int {
        var zombies = 0
        let deadline = lb_monotonic_ns() + 1_000_000_000
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
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
