internal import CRunLoopKitLibev
import Foundation
import Glibc
import RunLoopKit
@testable import RunLoopKitBackend
import Testing

/// fork() where real programs call it: from a file source's callout, from a nested run,
/// twice, and before exec. Each forks inside a child process of the test runner.
@Suite("Real time: fork at the edges", .timeLimit(.minutes(10)))
struct ForkEdgeTests {
    /// A loop with one source of each kernel kind: a file source, an eventfd source, a
    /// signal source and a timer. Returns the file source's file and the eventfd.
    static func loopWithEveryKind(_ loop: EVRunLoop, in directory: String, fires: LoopBox<Int>) -> (file: String, eventfd: Int32) {
        let file = directory + "/watched"
        FileWatchScaleTests.touch(file)
        loop.add(try! EVSource(watching: file, for: .modified) { _ in fires.value += 1 }, forMode: .default)
        let eventfd = clibev_eventfd_create()
        loop.add(try! EVSource(fileDescriptor: eventfd) { _ in }, forMode: .default)
        loop.add(EVSource(signal: SIGUSR2) { _ in }, forMode: .default)
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(10))
        return (file, eventfd)
    }

    @Test("fork() then exec: the program run inherits none of the loop's descriptors")
    func execInheritsNothing() async {
        await #expect(processExitsWith: .success) {
            let directory = FileManager.default.temporaryDirectory.path + "/runloopkit-exec-\(getpid())"
            mkdir(directory, 0o755)
            let loop = currentLoopOfThisThread()
            let fires = LoopBox(0)
            let (_, eventfd) = ForkEdgeTests.loopWithEveryKind(loop, in: directory, fires: fires)
            var one: UInt64 = 1
            _ = write(eventfd, &one, 8)
            loop.run(mode: .default, for: .milliseconds(10))
            // The shell lists its descriptors that name an anonymous inode (which only
            // kernel objects such as the loop's are) other than the listing's own.
            let script = "for f in /proc/$$/fd/*; do l=$(readlink $f); case $l in anon_inode*) echo \"$f $l\" >&2; exit 1;; esac; done; exit 0"
            let words: [String] = ["/bin/sh", "-c", script]
            let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
            let child = fork()
            if child == 0 {
                _ = arguments.withUnsafeBufferPointer { execv("/bin/sh", $0.baseAddress!) }
                _exit(2)
            }
            let passed = ForkTests.childPassed(child)
            try? FileManager.default.removeItem(atPath: directory)
            exit(passed ? 0 : 1)
        }
    }

    @Test("fork() from a file source's callout, the child's run going on: a change the child makes after its loop waited reaches it")
    func forkFromFileCallout() async {
        await #expect(processExitsWith: .success) {
            let directory = FileManager.default.temporaryDirectory.path + "/runloopkit-forkcallout-\(getpid())"
            mkdir(directory, 0o755)
            let loop = currentLoopOfThisThread()
            let fires = LoopBox(0)
            let file = directory + "/watched"
            FileWatchScaleTests.touch(file)
            let child = LoopBox<pid_t>(-1)
            loop.add(try! EVSource(watching: file, for: .modified) { _ in
                fires.value += 1
                guard fires.value == 1 else { return }
                child.value = fork()
                guard child.value == 0 else { return }
                // The child, as a daemon's: its run goes on (it waits), and a timer of that
                // run changes the file.
                loop.add(EVTimer(interval: .milliseconds(5), repeats: false) { _ in FileWatchScaleTests.touch(file) },
                         forMode: .default)
            }, forMode: .default)
            // One run in each process: the parent's ends once it forked, the child's once the
            // child's change was reported.
            loop.add(EVTimer(interval: .milliseconds(10), repeats: true) { _ in
                if fires.value >= 2 || (child.value > 0 && fires.value >= 1) { loop.stop() }
            }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            FileWatchScaleTests.touch(file)
            _ = loop.run(mode: .default, for: .seconds(5))
            if child.value == 0 { _exit(fires.value >= 2 ? 0 : 1) }
            let childPassed = ForkTests.childPassed(child.value)
            FileWatchScaleTests.touch(file)
            FileSourceForkTests.run(loop) { fires.value >= 2 }
            try? FileManager.default.removeItem(atPath: directory)
            exit(childPassed ? (fires.value >= 2 ? 0 : 2) : 1)
        }
    }

    @Test("fork() from a nested run, and fork() again in the child: each process's loop works")
    func forkTwiceFromNestedRun() async {
        await #expect(processExitsWith: .success) {
            let directory = FileManager.default.temporaryDirectory.path + "/runloopkit-forktwice-\(getpid())"
            mkdir(directory, 0o755)
            let loop = currentLoopOfThisThread()
            let fires = LoopBox(0)
            let (file, eventfd) = ForkEdgeTests.loopWithEveryKind(loop, in: directory, fires: fires)
            let verdict = LoopBox<Int32>(-1)
            loop.add(EVTimer(interval: .milliseconds(1), repeats: false) { _ in
                // A modal step: a nested run of a private mode, which forks twice.
                let modal = EVRunLoop.Mode("modal")
                let eventFires = LoopBox(0)
                let modalSource = try! EVSource(fileDescriptor: eventfd) { _ in
                    var value: UInt64 = 0
                    _ = read(eventfd, &value, 8)
                    eventFires.value += 1
                }
                loop.add(modalSource, forMode: modal)
                loop.add(try! EVSource(watching: file, for: .modified) { _ in fires.value += 1 }, forMode: modal)
                loop.run(mode: modal, for: .milliseconds(5))
                let first = fork()
                let second = first == 0 ? fork() : -1
                // The loop used once (changes before that are the parent's), then a change.
                loop.run(mode: modal, for: .zero)
                var one: UInt64 = 1
                _ = write(eventfd, &one, 8)  // an eventfd is shared across fork: each process reads it in turn
                FileWatchScaleTests.touch(file)
                let deadline = ContinuousClock.now + .seconds(5)
                while (eventFires.value < 1 || fires.value < 1), ContinuousClock.now < deadline {
                    loop.run(mode: modal, for: .milliseconds(20))
                    if eventFires.value < 1 { _ = write(eventfd, &one, 8) }
                }
                let mine: Int32 = eventFires.value >= 1 && fires.value >= 1 ? 0 : 1
                if second == 0 { _exit(mine) }  // the grandchild
                if first == 0 { _exit(ForkTests.childPassed(second) ? mine : 3) }
                verdict.value = ForkTests.childPassed(first) ? mine : 4
            }, forMode: .default)
            FileSourceForkTests.run(loop) { verdict.value >= 0 }
            try? FileManager.default.removeItem(atPath: directory)
            exit(verdict.value)
        }
    }
}

extension ForkEdgeTests {
    @Test("a forked child's first loop, made on the forking thread (the child's main thread), runs")
    func firstLoopInForkedChild() async {
        // The child's thread is its main thread: its loop is EVRunLoop.main, in a process
        // whose libdispatch main queue has no eventfd (the test runner's main thread is in
        // dispatchMain()).
        await #expect(processExitsWith: .success) {
            let child = fork()
            if child == 0 {
                let loop = currentLoopOfThisThread()
                let fires = LoopBox(0)
                loop.add(EVTimer(interval: .milliseconds(2), repeats: true) { _ in fires.value += 1 }, forMode: .default)
                // Runs until three fires, or 5 s: a loaded machine can hold the child off the
                // CPU for a whole fixed window.
                let deadline = ContinuousClock.now + .seconds(5)
                while fires.value < 3, ContinuousClock.now < deadline {
                    loop.run(mode: .default, for: .milliseconds(50))
                }
                _exit(fires.value >= 3 ? 0 : 1)
            }
            exit(ForkTests.childPassed(child) ? 0 : 1)
        }
    }

    @Test("fork() while another thread makes the process's first loop state: the child's loop runs")
    func forkDuringFirstLoopState() async {
        // A fresh process: the state a loop's pass reads once per process (the cycle clock's
        // usability) is not made yet. Another thread's first loop makes it, and the test's
        // hook holds that making open while this thread forks.
        await #expect(processExitsWith: .success) {
            let making = DispatchSemaphore(value: 0)
            ForkPreparation.firstUseHookForTests.withLock {
                $0 = { making.signal(); usleep(300_000) }
            }
            Thread.detachNewThread {
                let loop = currentLoopOfThisThread()
                loop.add(EVTimer(interval: .milliseconds(5), repeats: false) { _ in }, forMode: .default)
                loop.run(mode: .default, for: .milliseconds(50))
            }
            guard making.wait(timeout: .now() + 20) == .success else {
                FileHandle.standardError.write(Data("FAIL: no loop made the state in 20 s\n".utf8))
                exit(2)
            }
            let child = fork()
            if child == 0 {
                let loop = currentLoopOfThisThread()
                let fired = LoopBox(false)
                loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in
                    fired.value = true
                    loop.stop()
                }, forMode: .default)
                loop.run(mode: .default, for: .seconds(5))
                _exit(fired.value ? 0 : 1)
            }
            guard ForkTests.childPassed(child) else {
                FileHandle.standardError.write(Data("FAIL: the child's loop did not fire its timer in 20 s\n".utf8))
                exit(1)
            }
            exit(0)
        }
    }

    @Test("fork() while another thread measures the counter's rate: the child's clock reads go on")
    func forkDuringRateMeasurement() async {
        // The other thread takes the rate's lock at every reading (each a span after the
        // last); a child copied with the lock held must not wait for it at its first reading.
        await #expect(processExitsWith: .success) {
            let rate = CycleRate()
            Thread.detachNewThread {  // until the process exits
                var nanos: Int64 = 0
                while true {
                    nanos += CycleRate.span
                    rate.observe(nanos: nanos, ticks: UInt64(nanos), spread: 1)
                }
            }
            usleep(10_000)
            for fork in 0..<200 {
                let child = Glibc.fork()
                if child == 0 {
                    rate.observe(nanos: .max / 2, ticks: .max / 2)
                    _exit(0)
                }
                guard ForkTests.childPassed(child, within: .seconds(5)) else {
                    FileHandle.standardError.write(Data("FAIL: child \(fork) stuck at its first reading\n".utf8))
                    exit(1)
                }
            }
            exit(0)
        }
    }
}
