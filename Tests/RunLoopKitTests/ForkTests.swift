import Foundation
import Glibc
import RunLoopKit
import Testing

/// A loop in a forked child (issue 27): each test forks inside a child process of the test
/// runner, checks the grandchild's exit, and exits with the verdict.
@Suite("Real time: fork", .timeLimit(.minutes(10)))
struct ForkTests {
    /// Whether the child `pid` exited with status 0 within `limit`; killed (and false) otherwise.
    static func childPassed(_ pid: pid_t, within limit: Duration = .seconds(20)) -> Bool {
        var status: Int32 = 0
        for _ in 0..<Int(limit / .milliseconds(10)) {
            if waitpid(pid, &status, WNOHANG) == pid { return (status & 0x7f) == 0 && (status >> 8) & 0xff == 0 }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return false
    }

    @Test("a loop used before fork() runs its timers in the child; the parent's deadlines stay its own")
    func loopAfterFork() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))  // its epoll instance and timerfds in use
            let child = fork()
            if child == 0 {
                let fires = LoopBox(0)
                loop.add(EVTimer(interval: .milliseconds(20), repeats: true) { _ in fires.value += 1 }, forMode: .default)
                loop.run(mode: .default, for: .milliseconds(300))
                _exit(fires.value >= 5 ? 0 : 1)
            }
            let start = ContinuousClock.now
            let firedAfter = LoopBox<Duration?>(nil)
            loop.add(EVTimer(interval: .milliseconds(150), repeats: false) { _ in firedAfter.value = ContinuousClock.now - start },
                     forMode: .default)
            loop.run(mode: .default, for: .milliseconds(600))
            let childPassed = ForkTests.childPassed(child)
            let parentOnTime = firedAfter.value.map { $0 >= .milliseconds(150) && $0 < .milliseconds(400) } ?? false
            exit(childPassed && parentOnTime ? 0 : (childPassed ? 2 : 3))
        }
    }

    @Test("a descriptor source and a new loop on a new thread work in the child")
    func sourcesAndNewLoopAfterFork() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { exit(4) }
            let (readEnd, writeEnd) = (fds[0], fds[1])
            let reads = LoopBox(0)
            let source = try! EVSource(fileDescriptor: readEnd) { _ in
                var byte: UInt8 = 0
                if read(readEnd, &byte, 1) == 1 { reads.value += 1 }
            }
            loop.add(source, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            let child = fork()
            if child == 0 {
                _ = write(writeEnd, "x", 1)
                loop.run(mode: .default, for: .milliseconds(200), returnAfterSourceHandled: true)
                let threadFired = LoopBox(false)
                let thread = Thread {
                    let own = EVRunLoop.current
                    own.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in threadFired.value = true },
                            forMode: .default)
                    own.run(mode: .default, for: .milliseconds(200))
                }
                thread.start()
                usleep(400_000)
                _exit(reads.value == 1 && threadFired.value ? 0 : 1)
            }
            exit(ForkTests.childPassed(child) ? 0 : 1)
        }
    }

    @Test("a child that drives the loop through its poll descriptor gets its own kernel objects (issue 35, item 7)")
    func polledLoopAfterFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            // The descriptor handed out, the epoll instance and the deadline timerfd in use.
            let descriptor = loop.pollDescriptor
            _ = PolledLoopTests.drive(loop, for: .milliseconds(10))
            let child = fork()
            if child == 0 {
                // Once the parent sleeps towards its 300 ms deadline, a pass whose deadline
                // is later: the child's own timer, which fires in the child.
                usleep(50_000)
                let fired = LoopBox(false)
                loop.add(EVTimer(interval: 1.5, repeats: false) { _ in fired.value = true }, forMode: .default)
                _ = PolledLoopTests.drive(loop, for: .seconds(3)) { fired.value }
                // The descriptor a driving loop registered before fork() names this loop's
                // epoll instance now.
                _exit(fired.value && loop.pollDescriptor == descriptor ? 0 : 1)
            }
            let start = ContinuousClock.now
            let firedAfter = LoopBox<Duration?>(nil)
            loop.add(EVTimer(interval: .milliseconds(300), repeats: false) { _ in
                firedAfter.value = ContinuousClock.now - start
                loop.stop()
            }, forMode: .default)
            // The parent sleeps in its own run, on its own epoll instance and deadline timerfd.
            let wakesBefore = loop.statistics.wakeups
            loop.run(mode: .default, for: .seconds(4))
            let wakes = loop.statistics.wakeups - wakesBefore
            let childPassed = ForkTests.childPassed(child)
            let late = firedAfter.value.map { "\($0)" } ?? "never"
            let parentOnTime = firedAfter.value.map { $0 >= .milliseconds(300) && $0 < .milliseconds(1_000) } ?? false
                && wakes <= 5
            FileHandle.standardError.write(Data(
                "\(childPassed && parentOnTime ? "PASS" : "FAIL"): parent's 300 ms timer fired after \(late), \(wakes) wakes; child passed: \(childPassed)\n".utf8))
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }
}
