import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

@Suite struct FileWatchSnippetTests {
    @Test("the article's configuration reload sees an atomic save")
    func reloadsAfterAtomicSave() throws {
        let directory = FileManager.default.temporaryDirectory.path + "/runloopkit-snippet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/app.conf"
        try "level = 1\n".write(toFile: path, atomically: false, encoding: .utf8)
        let text = try onThread { () throws -> String in
            let loop = EVRunLoop.current
            // snippet: file-watch
            var settings = try String(contentsOfFile: path, encoding: .utf8)
            let reload = try EVSource(watching: path, for: [.modified, .created], tolerance: .milliseconds(50),
                                      handler: EVRunLoop.isolated { source in
                // Written in place, or saved by renaming a new file over it: read it again.
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
                settings = text
                print("reloaded after \(source.fileChanges)")
            })
            loop.add(reload, forMode: .default)
            // end
            try "level = 2\n".write(toFile: directory + "/app.conf.tmp", atomically: false, encoding: .utf8)
            rename(directory + "/app.conf.tmp", path)
            let deadline = ContinuousClock.now + .seconds(10)
            while settings != "level = 2\n", ContinuousClock.now < deadline {
                loop.run(mode: .default, for: .milliseconds(20))
            }
            reload.invalidate()
            return settings
        }
        #expect(text == "level = 2\n")
    }

    /// Runs `body` on a new thread (a loop of its own) and returns what it returned.
    private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.withLock { $0 = Result(catching: body) }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
