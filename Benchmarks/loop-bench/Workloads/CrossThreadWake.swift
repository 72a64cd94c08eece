import CLibevBench
import CoreFoundation
import Foundation
import RunLoopKit

/// Workload 5: another thread wakes the sleeping loop, each time after the previous wake was
/// handled and a gap: latency to the callout that sees it. Jobs sent across threads are the
/// job workload's.
enum CrossThreadWake: Workload {
    static let name = "wake"
    static let summary = "another thread wakes the sleeping loop (wakeUp / ev_async_send / CFRunLoopWakeUp); latency to the callout."
    static let gap = 0.0005

    static let unavailable: [Peer: String] = [
        .dispatch: "no loop to wake: a queue wakes for work sent to it (see jobs)",
        .nio: "no bare wake-up: the loop wakes for work sent to it, execute (see jobs)",
        .taskSleep: "no loop to wake: a task wakes for a job (see jobs)",
        .timerSequence: "a timer sequence has nothing to wake from another thread",
    ]

    static func measure(_ plan: Plan) -> [Row] {
        let figures = plan.repeated(plan.peers.filter { unavailable[$0] == nil }, figures: 2) { peer in
            Summary(onFreshThread { latencies(peer, samples: plan.wakeSamples) }).microseconds
        }
        let medianRow = Row.make(name, "wakeUp → callout latency median", unit: "µs", values: figures[0], unavailable: unavailable)
            .withGoal("< 20 µs") { $0.median < 20 }
        return [medianRow, Row.make(name, "wakeUp → callout latency p99", unit: "µs", values: figures[1], unavailable: unavailable)]
    }

    /// `samples` wakes of this thread's loop from another thread: the latencies (ns).
    static func latencies(_ peer: Peer, samples: Int) -> [Double] {
        let probe = WakeProbe(samples: samples, gap: gap)
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            let keepAlive = EVTimer(interval: 3600, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            loop.add(EVObserver(activities: .afterWaiting) { _, _ in
                if probe.handle() { loop.stop() }
            }, forMode: .default)
            probe.startSender { [loop] in loop.wakeUp() }
            loop.run()
            keepAlive.invalidate()
        case .libev:
            var latencies = [Int64](repeating: 0, count: samples)
            let status = lb_cross_thread_wake(Int32(samples), gap, &latencies)
            precondition(status == 0, "lb_cross_thread_wake failed")
            return latencies.map(Double.init)
        case .foundation:
            let runLoop = RunLoop.current
            let cfLoop: CFRunLoop = CFRunLoopGetCurrent()!
            // The sender's handle: the same loop, sent to its thread (CFRunLoop is not
            // Sendable), each call under Shared's lock.
            let sender = Shared(CFRunLoopGetCurrent()!)
            let keepAlive = Timer(fire: Date(timeIntervalSinceNow: 3600), interval: 0, repeats: false) { _ in }
            runLoop.add(keepAlive, forMode: .default)
            let observer = CFRunLoopObserverCreateWithHandler(
                nil, CFOptionFlags(EVRunLoop.Activity.afterWaiting.rawValue), true, 0
            ) { _, _ in
                if probe.handle() { CFRunLoopStop(cfLoop) }
            }
            CFRunLoopAddObserver(cfLoop, observer, kCFRunLoopDefaultMode)
            probe.startSender { sender.with { CFRunLoopWakeUp($0) } }
            while probe.handled.load(ordering: .acquiring) < samples {
                _ = runLoop.run(mode: .default, before: .distantFuture)
            }
            keepAlive.invalidate()
        default:
            fatalError("loop-bench wake: \(peer.rawValue) has no loop to wake")
        }
        probe.joinSender()
        return probe.latencies.map(Double.init)
    }
}
