import Foundation

/// Runs a built example binary with standard input from /dev/null and returns its output.
///
/// The test target depends on the executable, so SwiftPM builds it into the same bin
/// directory as the test binary; it is looked for there.
func runExample(_ name: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
    let process = Process()
    process.executableURL = try exampleBinary(name)
    process.arguments = arguments
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

func exampleBinary(_ name: String) throws -> URL {
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    // On Linux the tests run from <bin>/<Package>PackageTests.xctest; look in <bin>.
    for _ in 0..<3 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    struct NotBuilt: Error, CustomStringConvertible {
        let name: String
        let near: String
        var description: String { "\(name) was not found near \(near); run swift build first" }
    }
    throw NotBuilt(name: name, near: testBinary.path)
}
