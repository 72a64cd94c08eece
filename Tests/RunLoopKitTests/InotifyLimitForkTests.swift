import Foundation
import Glibc
import RunLoopKit
import RunLoopKitTestSupport
import Testing

/// The inotify watch limit reached in a forked child, whose loop adds every watch again to an
/// instance of its own while the parent's still count: a source whose watch the limit
/// refuses says so (its error names the call and the limit); it is not told that its file
/// was deleted. The limit is lowered in a user namespace of its own (`user.max_inotify_watches`),
/// which leaves the machine's alone; the namespace needs a process with one thread, a
/// forked child of the exit test's.
@Suite("Real time: inotify watch limit after fork", .timeLimit(.minutes(10)))
struct InotifyLimitForkTests {
    /// Writes `text` to the file at `path`; whether all of it was written.
    static func put(_ text: String, _ path: String) -> Bool {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return text.withCString { write(fd, $0, strlen($0)) } == text.utf8.count
    }

    /// In a process of one thread: enters a user namespace whose inotify watch limit is
    /// `limit`; false when the kernel refuses.
    static func enterNamespace(watchLimit limit: Int) -> Bool {
        // `unshare` (glibc declares it only under _GNU_SOURCE), with CLONE_NEWUSER.
        typealias Unshare = @convention(c) (Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "unshare"),
              unsafeBitCast(symbol, to: Unshare.self)(0x1000_0000) == 0 else { return false }
        return put("deny", "/proc/self/setgroups") && put("0 0 1", "/proc/self/uid_map")
            && put("0 0 1", "/proc/self/gid_map") && put("\(limit)", "/proc/sys/user/max_inotify_watches")
    }

    /// Three file sources in three directories (three watches, the limit four); the child's
    /// loop can add one of them again. Exit status: 0 when every source the child could not
    /// watch reported an error naming `inotify_add_watch` and none reported a deletion;
    /// 1 when one reported its file deleted.
    static func watchThenFork(root: String) -> Int32 {
        guard enterNamespace(watchLimit: 4) else { return 3 }
        let loop = currentLoopOfThisThread()
        let reports = LoopBox<[String]>([])
        var sources: [EVSource] = []
        for index in 0..<3 {
            let directory = root + "/d\(index)"
            mkdir(directory, 0o755)
            FileWatchScaleTests.touch(directory + "/file")
            let source = try! EVSource(watching: directory + "/file", for: .all) { source in
                if let error = source.error {
                    reports.value.append("error \(error.call) \(error.errno)")
                } else {
                    reports.value.append("\(source.fileChanges)")
                }
            }
            sources.append(source)
            loop.add(source, forMode: .default)
        }
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(10))
        let child = fork()
        if child == 0 {
            for _ in 0..<5 { loop.run(mode: .default, for: .milliseconds(10)) }
            let deleted = reports.value.filter { $0.contains("deleted") }.count
            let refused = reports.value.filter { $0.contains("inotify_add_watch") && $0.contains("\(ENOSPC)") }.count
            FileHandle.standardError.write(Data("child's reports: \(reports.value)\n".utf8))
            _exit(deleted > 0 ? 1 : refused == 2 ? 0 : 2)
        }
        let status = ForkedScenario.waitForChild(child)
        return status >= 0 && status < 128 ? status : 4
    }

    @Test("a watch the limit refuses in a forked child is reported as an error, not as the file's deletion")
    func limitInChild() async {
        await #expect(processExitsWith: .success) {
            let root = FileManager.default.temporaryDirectory.path + "/runloopkit-inotify-limit-\(getpid())"
            mkdir(root, 0o755)
            let process = fork()
            if process == 0 { _exit(InotifyLimitForkTests.watchThenFork(root: root)) }
            let status = ForkedScenario.waitForChild(process)
            try? FileManager.default.removeItem(atPath: root)
            exit(status >= 0 && status < 128 ? status : 5)
        }
    }
}
