/// A value touched only on the loop's thread, handed to `@Sendable` callouts.
final class LoopBox<Value>: @unchecked Sendable {
    // Safe: tests read and write it only on the loop's thread (or after the run).
    var value: Value
    init(_ value: Value) { self.value = value }
}
