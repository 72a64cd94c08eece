import CLibevBench
import CoreFoundation
import Foundation
import RunLoopKit

/// Workload 4b: a timer on the whole-second wall-clock grid (`--quick`: a shorter grid);
/// its phase is how far after the grid point each callout ran. RunLoopKit's
/// `EVTimer(alignedTo:)`, libev's `ev_periodic`, Foundation's `Timer(fire:interval:)` at
/// the next grid point.
enum AlignedPhase {
    static let name = "aligned"

    static func measure(_ plan: Plan) -> [Row] {
        let interval = plan.alignedInterval
        let fires = plan.alignedFires
        var medians: [Peer: [Double]] = [:]
        var maxima: [Peer: [Double]] = [:]
        for _ in 0..<plan.repetitions {
            for peer in plan.peers {
                let times = onFreshThread { wallTimes(on: peer, interval: interval, fires: fires) }
                let grid = Int64((interval * 1e9).rounded())
                let phases = Summary(times.map { time -> Double in
                    let phase = time % grid
                    return Double(phase > grid / 2 ? phase - grid : phase)  // early shows negative
                })
                medians[peer, default: []].append(phases.median / 1e3)
                maxima[peer, default: []].append(phases.max / 1e3)
            }
        }
        let grid = interval == 1 ? "whole-second" : "\(interval) s"
        var medianRow = Row.make(name, "\(grid) aligned phase median", unit: "µs", goal: "< 100 µs",
                                 values: medians)
        medianRow.goalMet = medianRow.cells[.runLoopKit]?.summary.map { $0.median < 100 }
        return [medianRow, Row.make(name, "\(grid) aligned phase max", unit: "µs", values: maxima)]
    }

    /// The wall-clock times (ns since 1970) of the first `fires` callouts.
    private static func wallTimes(on peer: Peer, interval: Double, fires: Int) -> [Int64] {
        let log = WallLog(capacity: fires)
        switch peer {
        case .runLoopKit:
            let loop = EVRunLoop.current
            let timer = EVTimer(alignedTo: interval) { _ in
                if log.record() == fires { EVRunLoop.current.stop() }
            }
            loop.add(timer, forMode: .default)
            loop.run()
            timer.invalidate()
        case .libev:
            let status = lb_aligned(interval, Int32(fires), log.times)
            precondition(status == 0, "lb_aligned: ev_loop_new failed")
            log.count = fires
        case .foundation:
            let now = Date().timeIntervalSince1970
            let next = Date(timeIntervalSince1970: ((now / interval).rounded(.down) + 1) * interval)
            let timer = Timer(fire: next, interval: interval, repeats: true) { _ in
                if log.record() == fires { CFRunLoopStop(CFRunLoopGetCurrent()) }
            }
            RunLoop.current.add(timer, forMode: .default)
            while log.count < fires { _ = RunLoop.current.run(mode: .default, before: .distantFuture) }
            timer.invalidate()
        }
        return Array(UnsafeBufferPointer(start: log.times, count: log.count))
    }
}
