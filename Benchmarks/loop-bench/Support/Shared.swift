import Synchronization

/// A value handed to another thread whose API documents the calls used as thread-safe
/// (`CFRunLoopWakeUp`, `CFRunLoopStop`, `CFRunLoopPerformBlock`), for a type that is not
/// `Sendable` (Foundation's `RunLoop`, CF's `CFRunLoop`): sent in once, then used under a
/// lock, so that the compiler checks the hand-over.
final class Shared<Value>: Sendable {
    private let value: Mutex<Value>

    init(_ value: sending Value) { self.value = Mutex(value) }

    /// Runs `body` with the value, under the lock.
    func with<Result: Sendable>(_ body: (Value) -> Result) -> Result {
        value.withLock { body($0) }
    }
}
