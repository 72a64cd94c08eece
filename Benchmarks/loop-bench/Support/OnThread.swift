import Foundation
import Synchronization

/// Runs `body` on a new thread, joins it, and returns `body`'s result: each measurement gets
/// a fresh `EVRunLoop` and `CFRunLoop`, and a count of descriptors or threads taken after
/// this call sees the thread's loop torn down (joined, not only waited for).
func onFreshThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
    let handoff = Handoff<Result>()
    let start = Unmanaged.passRetained(ThreadStart { handoff.deliver(body()) })
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, 8 << 20)
    var thread = pthread_t()
    let status = pthread_create(&thread, &attributes, { context in
        Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, start.toOpaque())
    guard status == 0 else { fatalError("loop-bench: pthread_create failed (\(status))") }
    pthread_join(thread, nil)
    return handoff.wait()
}

/// What a thread started by ``onFreshThread(_:)`` runs.
private final class ThreadStart: Sendable {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}

/// One value handed from one thread (or task) to another that blocks until it arrives.
final class Handoff<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Hands `value` over; call once.
    func deliver(_ value: Value) {
        self.value.withLock { $0 = value }
        done.signal()
    }

    /// Blocks until ``deliver(_:)`` was called and returns its value.
    func wait() -> Value {
        done.wait()
        return value.withLock { $0! }
    }
}
