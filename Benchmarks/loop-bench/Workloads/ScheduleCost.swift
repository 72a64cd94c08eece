import CLibevBench
import Foundation
import NIOCore
import RunLoopKit

/// Workload 2: create + add N one-shot timers 1–2 s away, then invalidate them in random order:
/// wall ns per timer for each half, from the second of two rounds (the first warms malloc).
enum ScheduleCost: Workload {
    static let name = "schedule"
    static let summary = "create + add N one-shot timers (random 1–2 s; above 100k: RunLoopKit and libev only), then invalidate all in random order; wall ns per timer (second of two rounds on one thread)."

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
        let (add, stop) = peer == .nio
            ? NIOLoop.onLoop { rounds(input, on: peer, timed: 1)[0] }
            : onFreshThread { rounds(input, on: peer, timed: 1)[0] }
        let count = Double(input.after.count)
        return [Double(add) / count, Double(stop) / count]
    }

    /// An untimed round, then `timed` rounds on the same thread and loop, which find malloc's
    /// arena grown and measure the loop, not page faults. RunLoopKit's timers go into one room,
    /// kept across the rounds as a program keeps its storage: freeing 64 KB or more between
    /// rounds would make glibc merge its fast bins, and put every timer of the next round on
    /// malloc's slow path.
    static func rounds(_ input: Input, on peer: Peer, timed: Int) -> [(Int64, Int64)] {
        let room = UnsafeMutablePointer<EVTimer>.allocate(capacity: input.after.count)
        defer { room.deallocate() }
        _ = run(input, on: peer, in: room, warmUp: true)
        return (0..<timed).map { _ in run(input, on: peer, in: room) }
    }

    /// A child of the pairs: `[peer key, timer count]`; the lowest ns per create + add and per
    /// invalidate of three rounds after an untimed one, malloc keeping what was freed.
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 1)
        let count = Int(a[0])
        lb_keep_freed_memory()
        let input = Input(count: count)
        let timed = onFreshThread { rounds(input, on: peer, timed: 3) }
        Pairs.report([Double(timed.map(\.0).min()!) / Double(count), Double(timed.map(\.1).min()!) / Double(count)])
    }

    /// Total ns for adding all timers, and for invalidating them all, through the `measured`
    /// functions unless `warmUp`. RunLoopKit's timers go into `room` and leave it released.
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
            // Not `Timer(timeInterval:repeats:block:)`: on Linux it fires at once (its fire
            // date is `Date()`, not now + interval), so it would not schedule what we ask.
            return timed(input) { after in
                let timer = Timer(fire: Date(timeIntervalSinceNow: after), interval: 0, repeats: false) { _ in }
                runLoop.add(timer, forMode: .default)
                return timer
            } cancel: { $0.invalidate() }
        case .dispatch:
            let queue = DispatchQueue(label: "loop-bench.schedule")
            defer { queue.sync {} }
            return timed(input) { after in
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + after)
                timer.setEventHandler {}
                timer.activate()
                return timer
            } cancel: { $0.cancel() }
        case .nio:
            // On the event loop's thread (`NIOLoop.onLoop`): off it, every call is a hop.
            let loop = NIOLoop.loop
            return timed(input) { loop.scheduleTask(in: .nanoseconds(Int64($0 * 1e9))) {} } cancel: { $0.cancel() }
        case .taskSleep, .timerSequence:
            fatalError("loop-bench schedule: \(peer.rawValue) has no synchronous add")
        }
    }

    /// Wall ns for `add` of every timer of `input` into an array, and for `cancel` of each in
    /// the random order: the peers whose timers are objects of their own.
    private static func timed<Handle>(_ input: Input, add: (Double) -> Handle, cancel: (Handle) -> Void) -> (Int64, Int64) {
        var handles: [Handle] = []
        handles.reserveCapacity(input.after.count)
        let t0 = Clock.monotonic()
        for after in input.after { handles.append(add(after)) }
        let t1 = Clock.monotonic()
        for index in input.stopOrder { cancel(handles[Int(index)]) }
        return (t1 - t0, Clock.monotonic() - t1)
    }
}
