import Foundation
import Synchronization

/// Send times and latencies shared between the sending thread and the loop thread.
final class WakeProbe: @unchecked Sendable {
    // Safe: `latencies[i]` is written by the loop thread before `handled` becomes i + 1
    // (release) and read after the sender finished (`joinSender`); the rest is atomic.
    let samples: Int
    /// Seconds the sender sleeps before each send, so the loop is asleep again.
    let gap: Double
    var latencies: [Int64]
    let sentAt = Atomic<Int64>(0)
    let handled = Atomic<Int>(0)
    private let senderDone = DispatchSemaphore(value: 0)

    init(samples: Int, gap: Double) {
        self.samples = samples
        self.gap = gap
        latencies = Array(repeating: 0, count: samples)
    }

    /// On the loop thread, in the callout: records the latency of the pending send, if
    /// any; returns true after the last sample.
    func handle() -> Bool {
        let now = Clock.monotonic()
        let sent = sentAt.exchange(0, ordering: .acquiringAndReleasing)
        guard sent != 0 else { return false }
        let index = handled.load(ordering: .relaxed)
        latencies[index] = now - sent
        handled.store(index + 1, ordering: .releasing)
        return index + 1 == samples
    }

    /// Starts the sending thread: for each sample, wait until the previous one was
    /// handled, sleep the gap, note the time, and `send`.
    func startSender(_ send: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            for index in 0..<samples {
                while handled.load(ordering: .acquiring) < index { sched_yield() }
                usleep(UInt32(gap * 1e6))
                sentAt.store(Clock.monotonic(), ordering: .releasing)
                send()
            }
            senderDone.signal()
        }
        thread.start()
    }

    /// Waits until the sending thread started by ``startSender(_:)`` is done.
    func joinSender() { senderDone.wait() }
}
