import RunLoopKitPlatform

/// RunLoopKit's `require`, for the targets above it (RunLoopKitGLib, RunLoopKitMetrics), which
/// name RunLoopKit only: the platform layer's check (`RunLoopKitPlatform`'s `require`), inlined.
/// Inside this module it shadows the platform's, to the same effect.
@inline(__always)
package func require(
    _ condition: Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    RunLoopKitPlatform.require(condition, message(), file: file, line: line)
}

/// RunLoopKit's `misuse`, for the targets above it: the platform layer's (see
/// ``require(_:_:file:line:)``).
package func misuse(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    RunLoopKitPlatform.misuse(message, file: file, line: line)
}
