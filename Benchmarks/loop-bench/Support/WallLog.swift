import Synchronization

/// Wall-clock times of the callouts of one peer: recorded by callouts on a loop thread, a
/// serial queue or a task (which may resume on another thread), read by the measuring thread.
final class WallLog: Sendable {
    private let times = Mutex<[Int64]>([])
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Records the wall clock now (up to `capacity` times); returns how many are recorded.
    func record() -> Int {
        let now = Clock.realtime()
        return times.withLock { times in
            if times.count < capacity { times.append(now) }
            return times.count
        }
    }

    /// How many times are recorded.
    var count: Int { times.withLock { $0.count } }

    /// The recorded times (ns since 1970).
    var values: [Int64] { times.withLock { $0 } }
}
