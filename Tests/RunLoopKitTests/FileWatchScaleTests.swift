import Foundation
import Glibc
import RunLoopKit
import Testing

/// File sources at scale (issue 35, item 10): a loop's file sources share one inotify
/// instance, so a loop watches thousands of files, each change reaching its own source only.
/// Each test runs in a child process, so that the inotify descriptors it counts are its own.
@Suite("Real time: file watching at scale", .timeLimit(.minutes(10)))
struct FileWatchScaleTests {
    /// How many of the process's descriptors are inotify instances (their `/proc/self/fd`
    /// link reads `anon_inode:inotify`).
    static func inotifyDescriptors() -> Int {
        openDescriptors().values.filter { $0 == "anon_inode:inotify" }.count
    }

    /// Appends one byte to `path` (in place: `IN_MODIFY`, `IN_CLOSE_WRITE`).
    static func touch(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { return }
        _ = write(fd, "x", 1)
        close(fd)
    }

    /// Watches `files` files spread over `directories` directories under `root` with one
    /// source each on one loop, changes them a batch at a time, and returns what went wrong
    /// (nil: every change fired its own source only, and the loop held one inotify descriptor).
    static func watchMany(files: Int, directories: Int, batch: Int, root: String) -> String? {
        var paths: [String] = []
        for directory in 0..<directories {
            let folder = "\(root)/d\(directory)"
            mkdir(folder, 0o755)
            for file in 0..<(files / directories) {
                let path = "\(folder)/f\(file)"
                close(open(path, O_WRONLY | O_CREAT, 0o644))
                paths.append(path)
            }
        }
        let before = inotifyDescriptors()
        let loop = currentLoopOfThisThread()
        let fired = LoopBox([Int](repeating: 0, count: paths.count))
        let strays = LoopBox<[String]>([])
        var sources: [EVSource] = []
        for (index, path) in paths.enumerated() {
            do {
                let source = try EVSource(watching: path) { source in
                    fired.value[index] += 1
                    if source.fileChanges != .modified || source.error != nil {
                        strays.value.append("\(path): \(source.fileChanges) \(source.error.map { "\($0)" } ?? "")")
                    }
                }
                loop.add(source, forMode: .default)
                sources.append(source)
            } catch {
                return "source \(index + 1) of \(paths.count): \(error)"
            }
        }
        loop.add(EVTimer(interval: 3_600, repeats: false) { _ in }, forMode: .default)
        loop.run(mode: .default, for: .zero)
        if let failed = sources.first(where: { !$0.isValid }) { return "a source failed: \(failed.error.map { "\($0)" } ?? "?")" }
        let held = inotifyDescriptors() - before
        guard held == 1 else { return "the loop holds \(held) inotify descriptors" }
        for start in stride(from: 0, to: paths.count, by: batch) {
            let end = min(start + batch, paths.count)
            for path in paths[start..<end] { touch(path) }
            let deadline = ContinuousClock.now + .seconds(30)
            while fired.value[start..<end].contains(0), ContinuousClock.now < deadline {
                loop.run(mode: .default, for: .milliseconds(20))
            }
            if let silent = (start..<end).first(where: { fired.value[$0] == 0 }) {
                return "\(paths[silent]) was changed and its source did not fire"
            }
            if let other = (end..<paths.count).first(where: { fired.value[$0] != 0 }) {
                return "\(paths[other]) fired before it was changed"
            }
            if let twice = (0..<end).first(where: { fired.value[$0] > 2 }) {
                return "\(paths[twice]), changed once, fired \(fired.value[twice]) times"
            }
        }
        if !strays.value.isEmpty { return "callouts other than [modified]: \(strays.value.prefix(5))" }
        for source in sources { source.invalidate() }
        return nil
    }

    @Test("10,000 files in 2,000 directories on one loop: one inotify descriptor, each change fires its own source only")
    func tenThousandFiles() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let root = FileManager.default.temporaryDirectory.path + "/runloopkit-scale-\(getpid())"
            mkdir(root, 0o755)
            let failure = FileWatchScaleTests.watchMany(files: 10_000, directories: 2_000, batch: 1_000, root: root)
            try? FileManager.default.removeItem(atPath: root)
            // The verdict goes to standard error, so that a failure shows what went wrong.
            FileHandle.standardError.write(Data((failure ?? "passed").utf8))
            exit(0)
        }
        #expect(standardError(result) == "passed")
    }

    @Test("inotify refusing an instance is reported naming the call and both limits, as a sentence")
    func refusedInstance() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 3_600, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .zero)
            // Every new descriptor is refused (EMFILE) from here on.
            let lowestFree = open("/dev/null", O_RDONLY)
            close(lowestFree)
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            let saved = limit
            limit.rlim_cur = rlim_t(lowestFree)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            let seen = LoopBox<EVRunLoop.Error?>(nil)
            do throws(EVRunLoop.Error) {
                let source = try EVSource(watching: "/tmp") { source in seen.value = source.error }
                loop.add(source, forMode: .default)
                let deadline = ContinuousClock.now + .seconds(5)
                while seen.value == nil, ContinuousClock.now < deadline { loop.run(mode: .default, for: .milliseconds(20)) }
            } catch {
                seen.value = error
            }
            limit = saved
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            let text = seen.value.map { "\($0)" } ?? "no error"
            let sentence = text.hasPrefix("EVSource(watching: \"/tmp\"): inotify_init1") && !text.contains("reached failed")
                && text.contains("RLIMIT_NOFILE") && text.contains("fs.inotify.max_user_instances")
                && text.hasSuffix(" failed (errno \(EMFILE))")
            FileHandle.standardError.write(Data((sentence ? "passed" : text).utf8))
            exit(0)
        }
        #expect(standardError(result) == "passed")
    }
}
