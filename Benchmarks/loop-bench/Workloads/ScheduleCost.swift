import CLibevBench
import Dispatch
import Foundation
import NIOCore
import RunLoopKit

/// Workload 2: create and add N one-shot timers (random fire times 1–2 s away, never
/// reached), then invalidate them all in random order. Wall ns per timer for each half,
/// from the second of two rounds on the same thread (the first warms up malloc).
/// Dispatch: `makeTimerSource` + `schedule` + `activate`, then `cancel`; NIO:
/// `scheduleTask(in:)` then `cancel()`, both on the event loop's thread.
enum ScheduleCost {
    static let name = "schedule"

    /// The same random timers for every peer.
    struct Input: Sendable {
        var after: [Double]
        var stopOrder: [Int32]

        init(count: Int) {
            var random = SeededRandom(seed: 2)
            after = (0..<count).map { _ in Double.random(in: 1..<2, using: &random) }
            stopOrder = (0..<Int32(count)).shuffled(using: &random)
        }
    }

    static let unavailable: [Peer: String] = [.taskSleep: noAdd, .timerSequence: noAdd]
    static let noAdd = "a task registers its sleep inside itself, asynchronously: there is no synchronous add to time"

    static func measure(_ plan: Plan) -> [Row] {
        plan.scheduleCounts.flatMap { count in
            let input = Input(count: count)
            // RunLoopKit and libev in interleaved pairs of fresh processes, the rest here.
            var pairPlan = plan
            pairPlan.pairs = plan.schedulePairs
            let pairs = Pairs.run(name, plan: pairPlan, arguments: [String(count)])
            let peers = Pairs.others(plan.peers, count: count).filter { unavailable[$0] == nil }
            let figures = plan.repeated(peers, figures: 2) { measureOnce(input, on: $0) }
            let reasons = Pairs.unavailable(unavailable, count: count)
            return [
                Row.make(name, "create + add per timer, N = \(count.grouped)", unit: "ns", values: figures[0], unavailable: reasons)
                    .paired(pairs, figure: 0).withRatioGoal("≤ 8× libev", to: .libev, bound: 8),
                Row.make(name, "invalidate per timer, N = \(count.grouped)", unit: "ns", values: figures[1], unavailable: reasons)
                    .paired(pairs, figure: 1).withRatioGoal("≤ 4× libev", to: .libev, bound: 4),
            ]
        }
    }

    /// ns per create + add and per invalidate, from the second of two rounds.
    static func measureOnce(_ input: Input, on peer: Peer) -> [Double] {
        // An untimed round first, on the same thread and loop: the timed round then finds
        // malloc's arena grown and measures the loop, not page faults.
        let (add, stop) = peer == .nio
            ? NIOLoop.onLoop { twoRounds(input, on: peer) }
            : onFreshThread { twoRounds(input, on: peer) }
        let count = Double(input.after.count)
        return [Double(add) / count, Double(stop) / count]
    }

    /// An untimed round, then a timed one, in one room.
    static func twoRounds(_ input: Input, on peer: Peer) -> (Int64, Int64) {
        withRoom(input) { room in
            _ = run(input, on: peer, in: room, warmUp: true)
            return run(input, on: peer, in: room)
        }
    }

    /// Calls `body` with room for `input`'s RunLoopKit timers, kept across its rounds as a
    /// program keeps its own storage: the timed round then mallocs its timers from what
    /// the last round freed. Room freed between rounds would not be like that: freeing a
    /// chunk of 64 KB or more makes glibc merge its fast bins, and every timer of the next
    /// round is then carved from the merged chunk on malloc's slow path.
    static func withRoom<Result>(_ input: Input, _ body: (UnsafeMutablePointer<EVTimer>) -> Result) -> Result {
        let room = UnsafeMutablePointer<EVTimer>.allocate(capacity: input.after.count)
        defer { room.deallocate() }
        return body(room)
    }

    /// A child of the pairs: `[peer key, timer count]`; prints the lowest ns per create + add
    /// and per invalidate of three timed rounds after an untimed one, all on one fresh
    /// thread (the lowest: a neighbour's burst on the shared machine only ever adds). malloc
    /// keeps what the untimed round freed, as a long-running process's would have it.
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 1)
        let count = Int(a[0])
        lb_keep_freed_memory()
        let input = Input(count: count)
        let rounds = onFreshThread {
            withRoom(input) { room in
                _ = run(input, on: peer, in: room, warmUp: true)
                return (0..<3).map { _ in run(input, on: peer, in: room) }
            }
        }
        Pairs.report([Double(rounds.map(\.0).min()!) / Double(count), Double(rounds.map(\.1).min()!) / Double(count)])
    }

    /// Total ns for adding all timers, and for invalidating them all. RunLoopKit and libev
    /// run the timed parts through their `measured` functions (callgrind's instruction
    /// rows), or with `warmUp` outside them (uncounted). RunLoopKit's timers go into `room`
    /// (``withRoom(_:_:)``) and leave it, released, before the return.
    static func run(_ input: Input, on peer: Peer, in room: UnsafeMutablePointer<EVTimer>, warmUp: Bool = false) -> (Int64, Int64) {
        let count = input.after.count
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            defer { room.deinitialize(count: count) }
            let t0 = Clock.monotonic()
            if warmUp { addTimers(loop, input.after, into: room) } else { measuredAdd(loop, input.after, into: room) }
            let t1 = Clock.monotonic()
            if warmUp { invalidateTimers(room, order: input.stopOrder) } else { measuredInvalidate(room, order: input.stopOrder) }
            return (t1 - t0, Clock.monotonic() - t1)
        case .libev:
            var add: Int64 = 0
            var stop: Int64 = 0
            let status = lb_schedule_cost(Int32(count), input.after, input.stopOrder, warmUp ? 1 : 0, &add, &stop)
            precondition(status == 0, "lb_schedule_cost: ev_loop_new failed")
            return (add, stop)
        case .foundation:
            let runLoop = RunLoop.current
            var timers: [Timer] = []
            timers.reserveCapacity(count)
            let t0 = Clock.monotonic()
            // Not `Timer(timeInterval:repeats:block:)`: on Linux it fires at once (its fire
            // date is `Date()`, not now + interval), so it would not schedule what we ask.
            for after in input.after {
                let timer = Timer(fire: Date(timeIntervalSinceNow: after), interval: 0, repeats: false) { _ in }
                runLoop.add(timer, forMode: .default)
                timers.append(timer)
            }
            let t1 = Clock.monotonic()
            for index in input.stopOrder { timers[Int(index)].invalidate() }
            return (t1 - t0, Clock.monotonic() - t1)
        case .dispatch:
            let queue = DispatchQueue(label: "loop-bench.schedule")
            var timers: [any DispatchSourceTimer] = []
            timers.reserveCapacity(count)
            let t0 = Clock.monotonic()
            for after in input.after {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + after)
                timer.setEventHandler {}
                timer.activate()
                timers.append(timer)
            }
            let t1 = Clock.monotonic()
            for index in input.stopOrder { timers[Int(index)].cancel() }
            let t2 = Clock.monotonic()
            queue.sync {}
            return (t1 - t0, t2 - t1)
        case .nio:
            // On the event loop's thread (`NIOLoop.onLoop`): off it, every call is a hop.
            let loop = NIOLoop.loop
            var tasks: [Scheduled<Void>] = []
            tasks.reserveCapacity(count)
            let t0 = Clock.monotonic()
            for after in input.after {
                tasks.append(loop.scheduleTask(in: .nanoseconds(Int64(after * 1e9))) {})
            }
            let t1 = Clock.monotonic()
            for index in input.stopOrder { tasks[Int(index)].cancel() }
            return (t1 - t0, Clock.monotonic() - t1)
        case .taskSleep, .timerSequence:
            fatalError("loop-bench schedule: \(peer.rawValue) has no synchronous add")
        }
    }
}
