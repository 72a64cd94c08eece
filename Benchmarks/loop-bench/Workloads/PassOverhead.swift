import CLibevBench
import CoreFoundation
import Foundation
import RunLoopKit

/// Workload 6: an idle pass with one observer per activity: `poll` (zero-timeout runs) and
/// `wake` (a `beforeWaiting` observer wakes the loop itself, so every pass sleeps and returns
/// at once). libev's pass has only `ev_prepare` and `ev_check`.
enum PassOverhead: Workload {
    static let name = "pass"
    static let summary = "idle passes with one observer per activity (CF observers for Foundation; libev: ev_prepare + ev_check); ns per pass."

    enum Shape: Int, CaseIterable, Sendable {
        case poll, wake
    }

    static let unavailable: [Peer: String] = [
        .dispatch: "no loop pass to observe",
        .nio: "no observers of its loop's iterations",
        .taskSleep: "no loop pass to observe",
        .timerSequence: "no loop pass to observe",
    ]

    static func measure(_ plan: Plan) -> [Row] {
        Shape.allCases.map { shape in
            let pairs = Pairs.run(name, plan: plan, arguments: [String(shape.rawValue), String(plan.passes)])
            let perPass = plan.repeated(Pairs.others(plan.peers).filter { unavailable[$0] == nil }, figures: 1) {
                [measureOnce(shape, on: $0, passes: plan.passes)]
            }
            let metric = shape == .poll
                ? "zero-timeout run, observers on every activity"
                : "sleeping pass woken at once from beforeWaiting"
            let row = Row.make(name, "ns per pass: \(metric)", unit: "ns", values: perPass[0], unavailable: unavailable)
                .paired(pairs, figure: 0)
            return shape == .poll ? row.withGoal("< 300 ns") { $0.median < 300 } : row
        }
    }

    /// ns per pass of `passes` passes on a fresh thread.
    static func measureOnce(_ shape: Shape, on peer: Peer, passes: Int) -> Double {
        Double(onFreshThread { run(shape, on: peer, passes: passes) }) / Double(passes)
    }

    /// A child of the pairs: `[peer key, shape, passes]`; prints the lowest ns per pass of
    /// three runs after an untimed one (the lowest: a neighbour's burst only ever adds).
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 2)
        let (shape, passes) = (Shape(rawValue: Int(a[0]))!, Int(a[1]))
        _ = measureOnce(shape, on: peer, passes: passes)
        Pairs.report([(0..<3).map { _ in measureOnce(shape, on: peer, passes: passes) }.min()!])
    }

    static let activities: [EVRunLoop.Activity] = [
        .entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit,
    ]

    /// Total wall ns for `passes` passes; checks that the peer made four observer callouts
    /// per pass (wake: plus one entry and one exit).
    private static func run(_ shape: Shape, on peer: Peer, passes: Int) -> Int64 {
        var (callouts, passesDone) = (0, 0)
        /// Every peer's observer: in the wake shape it wakes the loop before it waits, and
        /// stops it after the last pass.
        func observe(_ activity: EVRunLoop.Activity, wake: () -> Void, stop: () -> Void) {
            callouts += 1
            guard shape == .wake else { return }
            if activity == .beforeWaiting { wake() }
            if activity == .afterWaiting {
                passesDone += 1
                if passesDone == passes { stop() }
            }
        }
        let start: Int64
        let cleanUp: () -> Void
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            let keepAlive = EVTimer(interval: 3600, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            for activity in activities {
                loop.add(EVObserver(activities: activity) { _, activity in
                    observe(activity, wake: { loop.wakeUp() }, stop: { loop.stop() })
                }, forMode: .default)
            }
            start = Clock.monotonic()
            switch shape {
            case .poll: for _ in 0..<passes { loop.run(mode: .default, for: .zero) }
            case .wake: loop.run(mode: .default, for: .seconds(3600))
            }
            cleanUp = { keepAlive.invalidate() }
        case .libev:
            var total: Int64 = 0
            precondition(lb_pass_overhead(Int32(passes), shape == .wake ? 1 : 0, &total) == 0, "lb_pass_overhead failed")
            return total
        case .foundation:
            let cfLoop = CFRunLoopGetCurrent()!
            let keepAlive = Timer(fire: Date(timeIntervalSinceNow: 3600), interval: 0, repeats: false) { _ in }
            RunLoop.current.add(keepAlive, forMode: .default)
            let observers = activities.map { activity in
                let observer = CFRunLoopObserverCreateWithHandler(nil, CFOptionFlags(activity.rawValue), true, 0) { _, cf in
                    observe(EVRunLoop.Activity(rawValue: UInt(cf.rawValue)), wake: { CFRunLoopWakeUp(cfLoop) },
                            stop: { CFRunLoopStop(cfLoop) })
                }!
                CFRunLoopAddObserver(cfLoop, observer, kCFRunLoopDefaultMode)
                return observer
            }
            start = Clock.monotonic()
            switch shape {
            case .poll: for _ in 0..<passes { CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, false) }
            case .wake: CFRunLoopRunInMode(kCFRunLoopDefaultMode, 3600, false)
            }
            cleanUp = {
                for observer in observers { CFRunLoopObserverInvalidate(observer) }
                keepAlive.invalidate()
            }
        default:
            fatalError("loop-bench pass: \(peer.rawValue) has no loop pass")
        }
        let total = Clock.monotonic() - start
        cleanUp()
        let expected = shape == .poll ? 4 * passes : 4 * passes + 2
        precondition(callouts == expected, "loop-bench pass/\(shape) on \(peer.rawValue): \(callouts) observer callouts, expected \(expected)")
        return total
    }
}
