/// A value handed to another thread whose API documents the calls used as thread-safe
/// (`CFRunLoopWakeUp`, `CFRunLoopStop`, `CFRunLoopPerformBlock`).
final class Shared<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
