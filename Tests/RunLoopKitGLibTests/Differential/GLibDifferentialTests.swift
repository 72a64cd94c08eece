import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import Testing

/// The GLib differential suite (issue 35): every scenario runs under GLib's own
/// `g_main_loop_run` (the oracle) and under each of RunLoopKit's drivers (``GLibDriver``:
/// hosted alone, beside an idle source, by polling runs, beside private-mode runs, and
/// attached), and must dispatch the same sources, as many times, in the same order, each
/// within a latency bound of GLib's own, with GLib polling no more than a few times as often.
///
/// Serialized, and awaiting its runs' threads: the runs of one scenario at a time, so that
/// the drivers that never wait do not crowd out each other's timing, and no thread of the
/// test runner blocked meanwhile.
@Suite("Real time: GLib differential", .serialized, .timeLimit(.minutes(10)))
struct GLibDifferentialTests {
    static let scenarios = GLibScenario.descriptorScenarios + GLibScenario.sourceScenarios

    @Test("a scenario dispatches as under g_main_loop_run", arguments: scenarios)
    func scenario(_ scenario: GLibScenario) async {
        for problem in await differences(of: scenario) { Issue.record(Comment(rawValue: problem)) }
    }

    @Test("child watches, in a child process")
    func childWatches() async {
        let report = childReport(GLibScenario.childWatch)
        await #expect(processExitsWith: .success) {
            await exitWithDifferences(of: GLibScenario.childWatch)
        }
        #expect(readReport(report) == [])
    }

    @Test("unix signals, in a child process")
    func unixSignals() async {
        let report = childReport(GLibScenario.unixSignal)
        await #expect(processExitsWith: .success) {
            await exitWithDifferences(of: GLibScenario.unixSignal)
        }
        #expect(readReport(report) == [])
    }
}

/// The latency bound: a driver's dispatch at most this far (seconds) from GLib's own. Wide,
/// since GLib's own loop was seen 360 ms late, and a hosting loop 1 s, on a 2-core machine
/// at a load of 16; a dispatch that
/// does not come in time (the defects this suite was written for) shows as a different
/// order, since every scenario ends with a timeout of the lowest priority.
let latencyBound = 2.0

/// How `scenario` under each RunLoopKit driver differs from GLib's own loop; empty when in
/// agreement.
func differences(of scenario: GLibScenario) async -> [String] {
    let oracle = await GLibDriver.glib.run(scenario)
    var problems: [String] = []
    for driver in GLibDriver.allCases where driver != .glib {
        let outcome = await driver.run(scenario)
        let where_ = "\(scenario.name), \(driver): \(outcome)\n  g_main_loop_run: \(oracle)"
        guard outcome.names == oracle.names else {
            problems.append("dispatches differ: \(where_)")
            continue
        }
        for (mine, glib) in zip(outcome.entries, oracle.entries) where abs(mine.at - glib.at) > latencyBound {
            problems.append("\(mine.name) \(Int((mine.at - glib.at) * 1000)) ms from GLib's: \(where_)")
        }
        if driver.pollsLikeGLib && outcome.polls > 3 * oracle.polls + 20 + driver.extraPolls(inMilliseconds: outcome.milliseconds) {
            problems.append("GLib polled \(outcome.polls) times (its own loop: \(oracle.polls)): \(where_)")
        }
    }
    return problems
}

/// The file where a child process writes the differences it found (the exit test's
/// standard error does not reach the parent whole): per parent process and scenario.
func childReport(_ scenario: GLibScenario, parent: pid_t = getpid()) -> String {
    let name = scenario.name.map { $0.isLetter || $0.isNumber ? $0 : "-" }
    return "/tmp/runloopkit-glib-differential-\(parent)-\(String(name)).txt"
}

/// The differences a child process wrote, and removes the file.
func readReport(_ path: String) -> [String] {
    defer { unlink(path) }
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").map(String.init)
}

/// For a child process: writes the differences (``childReport(_:parent:)``) and exits with
/// 1, or exits with 0.
func exitWithDifferences(of scenario: GLibScenario) async -> Never {
    let problems = await differences(of: scenario)
    let text = problems.map { $0.replacingOccurrences(of: "\n", with: " ") + "\n" }.joined()
    if !problems.isEmpty { try? text.write(toFile: childReport(scenario, parent: getppid()), atomically: true, encoding: .utf8) }
    exit(problems.isEmpty ? 0 : 1)
}

extension GLibScenario {
    /// A child process spawned at 10 ms and watched (`g_child_watch_source_new`): its exit
    /// status dispatched once.
    static let childWatch = GLibScenario(name: "a child watch", setUp: { run in
        run.timeout(10) {
            var pid: pid_t = 0
            let words: [String] = ["/bin/sh", "-c", "sleep 0.02; exit 3"]
            let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
            defer { for argument in arguments { free(argument) } }
            guard posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ) == 0 else {
                run.log("posix_spawn failed")
                return false
            }
            run.log("spawned")
            let call = GLibChildCall { status in run.log("child exited \((status >> 8) & 0xff)") }
            run.keep(call)
            let source = g_child_watch_source_new(pid)!
            g_source_set_callback(source, unsafeBitCast(GLibChildCall.childFunc, to: GSourceFunc.self), call.userData, nil)
            g_source_attach(source, run.context)
            g_source_unref(source)
            return false
        }
    }, endAfter: 1_500)

    /// `SIGUSR1` watched (`g_unix_signal_source_new`) and raised twice, the second time 20 ms
    /// after the first dispatch. GLib hands a signal to the context from a worker thread of
    /// its own, seen 270 ms late beside a driver that never waits on a loaded machine: so
    /// this scenario, like the child watch (a process to start), ends at 1.5 s.
    static let unixSignal = GLibScenario(name: "a unix signal", setUp: { run in
        var count = 0
        let call = GLibCall {
            count += 1
            run.log("SIGUSR1 \(count)")
            if count == 1 { run.timeout(20) { run.log("kill 2"); kill(getpid(), SIGUSR1); return false } }
            return true
        }
        run.keep(call)
        let source = g_unix_signal_source_new(SIGUSR1)!
        g_source_set_callback(source, GLibCall.sourceFunc, call.userData, nil)
        g_source_attach(source, run.context)
        run.atEnd {
            g_source_destroy(source)
            g_source_unref(source)
        }
        run.timeout(20) { run.log("kill 1"); kill(getpid(), SIGUSR1); return false }
    }, endAfter: 1_500)
}

/// A `GChildWatchFunc` as a Swift closure given the wait status.
final class GLibChildCall {
    let body: (Int32) -> Void
    init(_ body: @escaping (Int32) -> Void) { self.body = body }
    var userData: gpointer { Unmanaged.passUnretained(self).toOpaque() }
    static let childFunc: GChildWatchFunc = { _, status, data in
        Unmanaged<GLibChildCall>.fromOpaque(data!).takeUnretainedValue().body(status)
    }
}
