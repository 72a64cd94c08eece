import CLibevBench
import CoreFoundation
import Foundation
import RunLoopKit

/// Workload 5: another thread wakes the sleeping loop, `samples` times, each after the
/// previous wake was handled and a short gap (so the loop is asleep again). Latency from
/// just before the call to the callout that sees it: RunLoopKit `wakeUp()` → `afterWaiting`
/// observer; libev `ev_async_send` → `ev_async` callback; CF `CFRunLoopWakeUp` →
/// `afterWaiting` observer. Work sent across threads (`perform`, `queue.async`, NIO's
/// `execute`, tasks) is the job workload's.
enum CrossThreadWake {
    static let name = "wake"
    static let gap = 0.0005

    /// What the other thread calls (``Probe``'s wake-latency mode names it).
    enum Call: String, CaseIterable, Sendable {
        case wakeUp
    }

    static let unavailable: [Peer: String] = [
        .dispatch: "no loop to wake: a queue wakes for work sent to it (see jobs)",
        .nio: "no bare wake-up: the loop wakes for work sent to it, execute (see jobs)",
        .taskSleep: "no loop to wake: a task wakes for a job (see jobs)",
        .timerSequence: "a timer sequence has nothing to wake from another thread",
    ]

    static func measure(_ plan: Plan) -> [Row] {
        var medians: [Peer: [Double]] = [:]
        var p99s: [Peer: [Double]] = [:]
        for _ in 0..<plan.repetitions {
            for peer in plan.peers where unavailable[peer] == nil {
                let summary = Summary(onFreshThread { latencies(.wakeUp, on: peer, samples: plan.wakeSamples) })
                medians[peer, default: []].append(summary.median / 1e3)
                p99s[peer, default: []].append(summary.percentile(99) / 1e3)
            }
        }
        var medianRow = Row.make(name, "wakeUp → callout latency median", unit: "µs", goal: "< 20 µs",
                                 values: medians, unavailable: unavailable)
        medianRow.goalMet = medianRow.cells[.runLoopKit]?.summary.map { $0.median < 20 }
        return [medianRow, Row.make(name, "wakeUp → callout latency p99", unit: "µs", values: p99s, unavailable: unavailable)]
    }

    /// Runs on the loop thread; returns the latencies (ns).
    static func latencies(_ call: Call, on peer: Peer, samples: Int) -> [Double] {
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
