import Glibc
import Synchronization
import Testing

/// The standard error an exit test observed, as text ("" when the test did not run).
func standardError(_ result: ExitTest.Result?) -> String {
    result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
}

/// A weak reference that other threads may read and write.
final class WeakBox<Object: AnyObject & Sendable>: Sendable {
    private let storage = Mutex<Weak>(Weak())

    private struct Weak { weak var object: Object? }

    var object: Object? {
        get { storage.withLock { $0.object } }
        set { storage.withLock { $0.object = newValue } }
    }
}

/// Runs `body` on a new pthread and joins it, so that the thread has exited (its
/// thread-specific data destroyed) when this returns.
func onJoinedThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let result = Mutex<T?>(nil)
    let work: @Sendable () -> Void = { result.withLock { $0 = body() } }
    let context = Unmanaged.passRetained(WorkBox(work)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<WorkBox>.fromOpaque(raw!).takeRetainedValue()
        box.work()
        return nil
    }, context)
    guard status == 0 else { fatalError("pthread_create failed (\(status))") }
    pthread_join(thread, nil)
    return result.withLock { $0! }
}

private final class WorkBox: Sendable {
    let work: @Sendable () -> Void
    init(_ work: @escaping @Sendable () -> Void) { self.work = work }
}
