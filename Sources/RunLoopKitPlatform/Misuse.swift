/// Stops the program with `message` unless `condition` holds: RunLoopKit's one check for
/// misuse and bad input. The message names the call and the value at fault.
///
/// Swift drops `precondition`'s message under `-O`; this goes through `fatalError`, whose
/// message is printed in every build configuration.
@inlinable
package func require(
    _ condition: Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if _slowPath(!condition) { misuse(message(), file: file, line: line) }
}

/// Stops the program with `message`, in every build configuration (see ``require(_:_:file:line:)``).
@inlinable
package func misuse(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message, file: file, line: line)
}
