import CLibevBench

/// A preallocated log of timer callouts — which timer fired, when (monotonic ns) — filled
/// from the callouts of one loop and analysed after the run.
///
/// The C side fills the same arrays through `lb_fire_log`, so lateness is computed by one
/// piece of code for every peer.
final class FireLog: @unchecked Sendable {
    // Safe: written only by the callouts of one loop, on that loop's thread, and read only
    // after that thread handed its result back (`onFreshThread` orders the two).
    let capacity: Int
    let ids: UnsafeMutablePointer<Int32>
    let times: UnsafeMutablePointer<Int64>
    var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        ids = .allocate(capacity: Swift.max(capacity, 1))
        times = .allocate(capacity: Swift.max(capacity, 1))
    }

    deinit {
        ids.deallocate()
        times.deallocate()
    }

    /// Records that timer `id` fired now. The only measuring code inside a timed callout.
    @inline(__always)
    func record(_ id: Int32) {
        guard count < capacity else { return }
        ids[count] = id
        times[count] = lb_monotonic_ns()
        count += 1
    }

    /// Runs `body` with the C view of this log; `count` follows what C recorded.
    func withCLog<T>(_ body: (UnsafeMutablePointer<lb_fire_log>) -> T) -> T {
        var log = lb_fire_log(ids: ids, times: times, capacity: Int64(capacity), count: 0)
        let result = body(&log)
        count = Int(log.count)
        return result
    }

    /// Lateness (ns) of every logged fire: its time minus the grid point it served, where
    /// timer i's grid is `firstFire[i] + k * interval`.
    ///
    /// The grid point served is the last one at or before the fire time plus `slack`, so
    /// a fire up to `slack` early shows as negative lateness and lateness must stay below
    /// `interval - slack` (it does in every workload: tolerance ≤ interval / 2).
    func lateness(firstFire: [Int64], interval: Int64, slack: Int64) -> [Double] {
        (0..<count).map { index in
            let elapsed = times[index] - firstFire[Int(ids[index])]
            let k = (elapsed + slack).dividedFloor(by: interval)
            return Double(elapsed - Swift.max(k, 0) * interval)
        }
    }
}
