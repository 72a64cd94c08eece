import Foundation
import Synchronization

/// Send times and latencies shared between the sending thread and the loop thread.
final class WakeProbe: Sendable {
    let samples: Int
    /// Seconds the sender sleeps before each send, so the loop is asleep again.
    let gap: Double
    /// Written by the loop thread (after the latency is read), read by the measuring thread.
    private let recorded: Mutex<[Int64]>
    /// The latencies recorded so far (ns).
    var latencies: [Int64] { recorded.withLock { $0 } }
    let sentAt = Atomic<Int64>(0)
    let handled = Atomic<Int>(0)
    private let senderDone = DispatchSemaphore(value: 0)

    init(samples: Int, gap: Double) {
        self.samples = samples
        self.gap = gap
        recorded = Mutex(Array(repeating: 0, count: samples))
    }

    /// On the loop thread, in the callout: records the latency of the pending send, if
    /// any; returns true after the last sample.
    func handle() -> Bool {
        let now = Clock.monotonic()
        let sent = sentAt.exchange(0, ordering: .acquiringAndReleasing)
        guard sent != 0 else { return false }
        let index = handled.load(ordering: .relaxed)
        recorded.withLock { $0[index] = now - sent }
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
