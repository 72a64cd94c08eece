import CLibevBench
import Synchronization

/// A preallocated log of which timer fired when (monotonic ns), analysed after the run by
/// one piece of code for every peer (C fills it through ``withCLog(_:)``). Callouts on
/// several threads may record: each takes a slot of its own, every slot an atomic.
final class FireLog: Sendable {
    let capacity: Int
    private let chunks: [FireLogChunk]
    private let next = Atomic<Int>(0)

    /// Fires recorded (at most `capacity`).
    var count: Int { Swift.min(next.load(ordering: .acquiring), capacity) }

    init(capacity: Int) {
        self.capacity = capacity
        chunks = (0..<(capacity + FireLogChunk.size - 1) / FireLogChunk.size).map { _ in FireLogChunk() }
    }

    /// Records that timer `id` fired now. The only measuring code inside a timed callout.
    @inline(__always)
    func record(_ id: Int32) {
        let now = lb_monotonic_ns()
        store(id, now, at: next.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    /// Records a value (lateness, ns) rather than a time, under `id`.
    @inline(__always)
    func record(_ id: Int32, value: Int64) {
        store(id, value, at: next.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    /// Records the wall clock now (ns since 1970) as a value; returns how many are recorded.
    @discardableResult
    func recordWallTime() -> Int {
        record(0, value: Clock.realtime())
        return count
    }

    @inline(__always)
    private func store(_ id: Int32, _ time: Int64, at slot: Int) {
        guard slot < capacity else { return }
        let chunk = chunks[slot / FireLogChunk.size]
        chunk.ids[slot % FireLogChunk.size].store(id, ordering: .relaxed)
        chunk.times[slot % FireLogChunk.size].store(time, ordering: .relaxed)
    }

    private func id(at slot: Int) -> Int32 {
        chunks[slot / FireLogChunk.size].ids[slot % FireLogChunk.size].load(ordering: .relaxed)
    }

    private func time(at slot: Int) -> Int64 {
        chunks[slot / FireLogChunk.size].times[slot % FireLogChunk.size].load(ordering: .relaxed)
    }

    /// The times (or values, with ``record(_:value:)``) recorded, in slot order.
    var values: [Int64] { (0..<count).map(time(at:)) }

    /// The timer and time of each fire recorded, in slot order.
    var entries: [(id: Int, time: Int64)] { (0..<count).map { (Int(id(at: $0)), time(at: $0)) } }

    /// Runs `body` with a C view of this log; what C recorded is copied in after.
    func withCLog<T>(_ body: (UnsafeMutablePointer<lb_fire_log>) -> T) -> T {
        var ids = [Int32](repeating: 0, count: Swift.max(capacity, 1))
        var times = [Int64](repeating: 0, count: Swift.max(capacity, 1))
        let (result, recorded) = ids.withUnsafeMutableBufferPointer { idBuffer in
            times.withUnsafeMutableBufferPointer { timeBuffer in
                var log = lb_fire_log(ids: idBuffer.baseAddress, times: timeBuffer.baseAddress,
                                      capacity: Int64(capacity), count: 0)
                let result = body(&log)
                return (result, Swift.min(Int(log.count), capacity))
            }
        }
        for slot in 0..<recorded { store(ids[slot], times[slot], at: slot) }
        next.store(recorded, ordering: .releasing)
        return result
    }

    /// Lateness (ns) of every logged fire after the grid point it served (timer i's grid:
    /// `firstFire[i] + k * interval`): the last at or before the fire plus `slack`, so a fire
    /// up to `slack` early is negative lateness.
    func lateness(firstFire: [Int64], interval: Int64, slack: Int64) -> [Double] {
        (0..<count).map { index in
            let elapsed = time(at: index) - firstFire[Int(id(at: index))]
            return Double(elapsed - Swift.max((elapsed + slack) / interval, 0) * interval)
        }
    }
}

extension FireLog? {
    /// ``FireLog/withCLog(_:)``, or `body(nil)` without a log.
    func withCLog<T>(_ body: (UnsafeMutablePointer<lb_fire_log>?) -> T) -> T {
        if let log = self { log.withCLog(body) } else { body(nil) }
    }
}

/// A run of ``FireLog``'s slots, each an atomic, so that any thread may fill its own.
final class FireLogChunk: Sendable {
    static let size = 1024
    let ids: InlineArray<1024, Atomic<Int32>> = InlineArray { _ in Atomic(0) }
    let times: InlineArray<1024, Atomic<Int64>> = InlineArray { _ in Atomic(0) }
}
