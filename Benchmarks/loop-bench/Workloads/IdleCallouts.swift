import CLibevBench
import Foundation
import RunLoopKit
import Synchronization

/// Workload 16 (issue 27): one idle source counting to N callouts: process CPU per callout,
/// alone or beside one watched descriptor. RunLoopKit skips `epoll_wait` when it watches no
/// descriptor, libev never does, so only the second shape is the same work (the goal's).
enum IdleCallouts: Workload {
    static let name = "idle"
    static let summary = "one idle source counting to N callouts, then stopping the run (EVSource.idle, ev_idle), with nothing else in the loop and with an idle pipe watched; CPU time of the process per callout. Interleaved pairs of child processes."

    static let unavailable: [Peer: String] = [
        .foundation: "CFRunLoop has no idle source",
        .dispatch: "no idle source",
        .nio: "no idle callback on its event loop",
        .taskSleep: "no idle callback (Task.yield is not one: it does not wait for an idle loop)",
        .timerSequence: "a timer sequence has no idle callback",
    ]

    static func measure(_ plan: Plan) -> [Row] {
        [false, true].map { watching in
            let pairs = Pairs.run(name, plan: plan, arguments: [String(plan.idleCallouts), watching ? "1" : "0"])
            let shape = watching ? "the loop also watching an idle pipe" : "nothing else in the loop"
            return Row.make(name, "CPU ns per idle callout, \(plan.idleCallouts.grouped) callouts of one idle source, \(shape)",
                            unit: "ns", values: [:], unavailable: unavailable)
                .paired(pairs, figure: 0)
                .withRatioGoal("≤ 1.5× libev", to: .libev, bound: 1.5)
        }
    }

    /// A child of the pairs: `[peer key, callouts, 0 or 1 watched pipes]`; prints the lowest CPU
    /// ns per callout of three runs after an untimed one (a neighbour's burst only ever adds).
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 2)
        let (callouts, watching) = (Int(a[0]), a[1] == 1)
        _ = measureOnce(peer, callouts: callouts, watching: watching)
        Pairs.report([(0..<3).map { _ in measureOnce(peer, callouts: callouts, watching: watching) }.min()!])
    }

    /// CPU ns per callout of `callouts` idle callouts on a fresh thread; `watching`: the
    /// loop also watches the read end of a pipe nobody writes.
    static func measureOnce(_ peer: Peer, callouts: Int, watching: Bool) -> Double {
        var ends: [Int32] = [-1, -1]
        if watching { precondition(pipe(&ends) == 0, "loop-bench idle: pipe failed (errno \(errno))") }
        defer { if watching { close(ends[0]); close(ends[1]) } }
        let watched = ends[0]
        let cpu = onFreshThread { () -> Int64 in
            if peer == .runLoopKit { return runLoopKit(callouts: callouts, watched: watched) }
            var cpu: Int64 = 0
            precondition(lb_idle(Int32(callouts), watched, &cpu) == 0, "lb_idle failed")
            return cpu
        }
        return Double(cpu) / Double(callouts)
    }

    /// The handler's count (loop thread only; an atomic so that the `@Sendable` handler may
    /// hold it, read and written with plain loads and stores as libev's side counts).
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    private static func runLoopKit(callouts: Int, watched: Int32) -> Int64 {
        let loop = EVRunLoop.current
        let count = Count()
        let source = EVSource.idle { source in
            let next = count.value.load(ordering: .relaxed) + 1
            count.value.store(next, ordering: .relaxed)
            if next == callouts {
                source.invalidate()
                loop.stop()
            }
        }
        loop.add(source, forMode: .default)
        let pipeSource = watched < 0 ? nil : try! EVSource(fileDescriptor: watched) { _ in }
        if let pipeSource { loop.add(pipeSource, forMode: .default) }
        let cpu0 = lb_process_cpu_ns()
        measuredIdle(loop)
        let cpu = lb_process_cpu_ns() - cpu0
        pipeSource?.invalidate()
        precondition(count.value.load(ordering: .relaxed) == callouts,
                     "loop-bench idle: \(count.value.load(ordering: .relaxed)) of \(callouts) callouts")
        return cpu
    }
}
