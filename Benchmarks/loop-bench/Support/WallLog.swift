/// Wall-clock times of callouts on one loop thread.
final class WallLog: @unchecked Sendable {
    // Safe: written by callouts on one loop thread; read on that thread after its run.
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
