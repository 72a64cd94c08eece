import CLibevBench
import CoreFoundation
import Foundation
import RunLoopKit

/// Workload 6: the cost of an idle pass with one observer per activity, in two shapes.
///
/// - poll: a run with a zero timeout, over and over (`run(mode:for: .zero)`,
///   `CFRunLoopRunInMode(mode, 0, false)`, `ev_run(EVRUN_NOWAIT)`): entry, beforeTimers,
///   beforeSources, a non-blocking backend poll, exit.
/// - wake: one long run whose `beforeWaiting` observer wakes the loop itself, so every pass
///   goes to sleep and returns at once: beforeTimers, beforeSources, beforeWaiting, the
///   wake, afterWaiting.
///
/// libev has no entry/exit/beforeTimers/beforeSources points: its pass has one `ev_prepare`
/// (before the poll) and one `ev_check` (after it).
enum PassOverhead {
    static let name = "pass"

    enum Shape: String, CaseIterable, Sendable {
        case poll, wake
    }

    static let unavailable: [Peer: String] = [
        .dispatch: "no loop pass to observe",
        .nio: "no observers of its loop's iterations",
        .taskSleep: "no loop pass to observe",
        .timerSequence: "no loop pass to observe",
    ]

    static func measure(_ plan: Plan) -> [Row] {
        var rows: [Row] = []
        for shape in Shape.allCases {
            // RunLoopKit and libev in interleaved pairs of fresh processes, Foundation here.
            let pairs = Pairs.run(name, plan: plan,
                                  arguments: [shape.rawValue, String(plan.passes)])
            var perPass: [Peer: [Double]] = [:]
            for _ in 0..<plan.repetitions {
                for peer in Pairs.others(plan.peers) where unavailable[peer] == nil {
                    perPass[peer, default: []].append(measureOnce(shape, on: peer, passes: plan.passes))
                }
            }
            let metric = shape == .poll
                ? "zero-timeout run, observers on every activity"
                : "sleeping pass woken at once from beforeWaiting"
            var row = Row.make(name, "ns per pass: \(metric)", unit: "ns",
                               goal: shape == .poll ? "< 300 ns" : nil, values: perPass, unavailable: unavailable)
                .paired(pairs, figure: 0)
            if shape == .poll { row.goalMet = row.cells[.runLoopKit]?.summary.map { $0.median < 300 } }
            rows.append(row)
        }
        return rows
    }

    /// ns per pass of `passes` passes on a fresh thread.
    static func measureOnce(_ shape: Shape, on peer: Peer, passes: Int) -> Double {
        Double(onFreshThread { run(shape, on: peer, passes: passes) }) / Double(passes)
    }

    /// A child of the pairs: `[peer key, shape, passes]`; prints the lowest ns per pass of
    /// three runs after an untimed one (the lowest: a neighbour's burst only ever adds).
    static func child(_ arguments: [String]) {
        guard arguments.count == 3, let peer = Peer(key: arguments[0]), let shape = Shape(rawValue: arguments[1]),
              let passes = Int(arguments[2]) else {
            fatalError("loop-bench pass child: expected a peer, a shape and a pass count, got \(arguments)")
        }
        _ = measureOnce(shape, on: peer, passes: passes)
        Pairs.report([(0..<3).map { _ in measureOnce(shape, on: peer, passes: passes) }.min()!])
    }

    static let activities: [EVRunLoop.Activity] = [
        .entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit,
    ]

    /// Total wall ns for `passes` passes.
    private static func run(_ shape: Shape, on peer: Peer, passes: Int) -> Int64 {
        let callouts = Counter()
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            let keepAlive = EVTimer(interval: 3600, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            var passesDone = 0
            for activity in activities {
                loop.add(EVObserver(activities: activity) { _, activity in
                    callouts.value += 1
                    guard shape == .wake else { return }
                    if activity == .beforeWaiting { loop.wakeUp() }
                    if activity == .afterWaiting {
                        passesDone += 1
                        if passesDone == passes { loop.stop() }
                    }
                }, forMode: .default)
            }
            let start = Clock.monotonic()
            switch shape {
            case .poll: for _ in 0..<passes { loop.run(mode: .default, for: .zero) }
            case .wake: loop.run(mode: .default, for: .seconds(3600))
            }
            let total = Clock.monotonic() - start
            keepAlive.invalidate()
            check(callouts.value, shape: shape, passes: passes, peer: peer)
            return total
        case .libev:
            var total: Int64 = 0
            let status = lb_pass_overhead(Int32(passes), shape == .wake ? 1 : 0, &total)
            precondition(status == 0, "lb_pass_overhead failed")
            return total
        case .foundation:
            let cfLoop = CFRunLoopGetCurrent()!
            let keepAlive = Timer(fire: Date(timeIntervalSinceNow: 3600), interval: 0, repeats: false) { _ in }
            RunLoop.current.add(keepAlive, forMode: .default)
            var passesDone = 0
            var observers: [CFRunLoopObserver] = []
            for activity in activities {
                let observer = CFRunLoopObserverCreateWithHandler(
                    nil, CFOptionFlags(activity.rawValue), true, 0
                ) { _, cfActivity in
                    callouts.value += 1
                    guard shape == .wake else { return }
                    let activity = EVRunLoop.Activity(rawValue: UInt(cfActivity.rawValue))
                    if activity == .beforeWaiting { CFRunLoopWakeUp(cfLoop) }
                    if activity == .afterWaiting {
                        passesDone += 1
                        if passesDone == passes { CFRunLoopStop(cfLoop) }
                    }
                }!
                CFRunLoopAddObserver(cfLoop, observer, kCFRunLoopDefaultMode)
                observers.append(observer)
            }
            let start = Clock.monotonic()
            switch shape {
            case .poll: for _ in 0..<passes { CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, false) }
            case .wake: CFRunLoopRunInMode(kCFRunLoopDefaultMode, 3600, false)
            }
            let total = Clock.monotonic() - start
            for observer in observers { CFRunLoopObserverInvalidate(observer) }
            keepAlive.invalidate()
            check(callouts.value, shape: shape, passes: passes, peer: peer)
            return total
        default:
            fatalError("loop-bench pass: \(peer.rawValue) has no loop pass")
        }
    }

    /// Stops the benchmark if a peer did not make the callouts a pass of this shape makes:
    /// poll = entry, beforeTimers, beforeSources, exit per run; wake = beforeTimers,
    /// beforeSources, beforeWaiting, afterWaiting per pass, plus one entry and one exit.
    private static func check(_ callouts: Int, shape: Shape, passes: Int, peer: Peer) {
        let expected = shape == .poll ? 4 * passes : 4 * passes + 2
        precondition(callouts == expected,
                     "loop-bench pass/\(shape) on \(peer.rawValue): \(callouts) observer callouts, expected \(expected)")
    }
}
