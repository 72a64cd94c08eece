import Foundation
import Glibc
import RunLoopKit
import Testing

/// File sources across fork() (issue 35, item 6): the child's loop watches through an inotify
/// instance of its own, so it never takes the parent's changes, and what the child does with
/// its copies of the parent's sources never touches the parent's watches.
@Suite("Real time: file sources after fork", .timeLimit(.minutes(10)))
struct FileSourceForkTests {
    /// Runs `loop` until `done` holds, for at most `limit`.
    static func run(_ loop: EVRunLoop, for limit: Duration = .seconds(5), until done: () -> Bool) {
        let deadline = ContinuousClock.now + limit
        while !done(), ContinuousClock.now < deadline { loop.run(mode: .default, for: .milliseconds(20)) }
    }

    /// The parent's side of ``childAndParentBothSeeChanges()``; returns the exit status.
    static func forkAndWatch(root: String) -> Int32 {
        let (file, other) = (root + "/a/file", root + "/b/file")
        mkdir(root + "/a", 0o755)
        mkdir(root + "/b", 0o755)
        FileWatchScaleTests.touch(file)
        FileWatchScaleTests.touch(other)
        let loop = currentLoopOfThisThread()
        let fired = LoopBox(0)
        let otherFired = LoopBox(0)
        let source = try! EVSource(watching: file, for: .modified) { _ in fired.value += 1 }
        let otherSource = try! EVSource(watching: other, for: .modified) { _ in otherFired.value += 1 }
        loop.add(source, forMode: .default)
        loop.add(otherSource, forMode: .default)
        loop.add(EVTimer(interval: 3_600, repeats: false) { _ in }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(10))  // the loop's inotify instance in use
        var channel: [Int32] = [0, 0]
        guard pipe(&channel) == 0 else { return 10 }
        let child = fork()
        if child == 0 {
            // The child lets go of its copy of one source before its loop ever runs again.
            otherSource.invalidate()
            loop.run(mode: .default, for: .milliseconds(10))
            _ = write(channel[1], "r", 1)  // ready: the parent changes the file now
            run(loop) { fired.value >= 1 }
            source.invalidate()
            _exit(fired.value >= 1 ? 0 : 1)
        }
        var byte: UInt8 = 0
        guard read(channel[0], &byte, 1) == 1 else { return 11 }
        FileWatchScaleTests.touch(file)
        let childSawIt = ForkTests.childPassed(child)
        // Only now does the parent's loop run: the change must still be its to read.
        run(loop) { fired.value >= 1 }
        let parentSawIt = fired.value >= 1
        FileWatchScaleTests.touch(file)
        FileWatchScaleTests.touch(other)
        run(loop) { fired.value >= 2 && otherFired.value >= 1 }
        let parentGoesOn = fired.value >= 2 && otherFired.value >= 1
        FileHandle.standardError.write(Data(
            "child saw the change: \(childSawIt); parent saw it: \(parentSawIt); parent's later changes: \(parentGoesOn)\n".utf8))
        return childSawIt && parentSawIt && parentGoesOn ? 0 : 1
    }

    @Test("after fork() the child's loop sees changes through its own inotify instance; the parent loses none")
    func childAndParentBothSeeChanges() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let root = FileManager.default.temporaryDirectory.path + "/runloopkit-fork-\(getpid())"
            mkdir(root, 0o755)
            let status = FileSourceForkTests.forkAndWatch(root: root)
            try? FileManager.default.removeItem(atPath: root)
            exit(status < 10 ? 0 : status)  // the verdict is on standard error
        }
        #expect(standardError(result).contains("child saw the change: true; parent saw it: true; parent's later changes: true"))
    }
}
