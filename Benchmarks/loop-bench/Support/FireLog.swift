import CLibevBench
import Synchronization

/// A preallocated log of timer callouts — which timer fired, when (monotonic ns) — filled
/// from the callouts of one loop and analysed after the run.
///
/// The C side fills the same arrays through `lb_fire_log`, so lateness is computed by one
/// piece of code for every peer. Callouts on several threads at once (tasks) may record:
/// each takes its own slot.
final class FireLog: @unchecked Sendable {
    // Safe: every record writes a slot no other record writes (the atomic `next` hands them
    // out); the arrays are read only after the run handed its result back (a thread join or
    // a semaphore orders the two).
    let capacity: Int
    let ids: UnsafeMutablePointer<Int32>
    let times: UnsafeMutablePointer<Int64>
    private let next = Atomic<Int>(0)

    /// Fires recorded (at most `capacity`).
    var count: Int { Swift.min(next.load(ordering: .acquiring), capacity) }

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
        let now = lb_monotonic_ns()
        let slot = next.wrappingAdd(1, ordering: .relaxed).oldValue
        guard slot < capacity else { return }
        ids[slot] = id
        times[slot] = now
    }

    /// Records a value (lateness, ns) rather than a time, under `id`.
    @inline(__always)
    func record(_ id: Int32, value: Int64) {
        let slot = next.wrappingAdd(1, ordering: .relaxed).oldValue
        guard slot < capacity else { return }
        ids[slot] = id
        times[slot] = value
    }

    /// The values recorded with ``record(_:value:)``.
    var values: [Int64] { Array(UnsafeBufferPointer(start: times, count: count)) }

    /// Runs `body` with the C view of this log; `count` follows what C recorded.
    func withCLog<T>(_ body: (UnsafeMutablePointer<lb_fire_log>) -> T) -> T {
        var log = lb_fire_log(ids: ids, times: times, capacity: Int64(capacity), count: 0)
        let result = body(&log)
        next.store(Int(log.count), ordering: .releasing)
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
