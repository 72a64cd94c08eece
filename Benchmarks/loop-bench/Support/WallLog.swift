/// Wall-clock times of the callouts of one peer.
final class WallLog: @unchecked Sendable {
    // Safe: written by one callout at a time (a loop thread, a serial queue, one task), each
    // ordered after the previous one; read after the run handed its result back.
    let times: UnsafeMutablePointer<Int64>
    let capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        times = .allocate(capacity: capacity)
    }

    deinit { times.deallocate() }

    /// Records the wall clock now; returns how many are recorded.
    func record() -> Int {
        if count < capacity {
            times[count] = Clock.realtime()
            count += 1
        }
        return count
    }
}
