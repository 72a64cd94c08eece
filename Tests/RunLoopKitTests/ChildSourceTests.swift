import Foundation
import Glibc
@testable import RunLoopKit
import Synchronization
import Testing

/// Starts `arguments` (a path and its arguments) with `posix_spawn`, default signal actions
/// and an empty signal mask; returns its process id.
func spawnChild(_ arguments: [String]) -> pid_t {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, arguments[0], nil, &attributes, &argv, environ)
    precondition(status == 0, "posix_spawn \(arguments) failed (\(status))")
    return pid
}

/// Whether `pid` is a child of this process that nobody has reaped (running or a zombie);
/// reaps nothing.
func isUnreapedChild(_ pid: pid_t) -> Bool {
    var info = siginfo_t()
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
}

/// Whether `pid` has exited and is waiting to be reaped (a zombie); reaps nothing.
func isZombie(_ pid: pid_t) -> Bool {
    var info = siginfo_t()
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == pid
}

/// Waits (sleeping 1 ms at a time, at most 20 s) until `pid` is a zombie.
func awaitZombie(_ pid: pid_t) {
    let deadline = ContinuousClock.now + .seconds(20)
    while !isZombie(pid), ContinuousClock.now < deadline { usleep(1_000) }
}

/// Both ways a child source learns of the exit: its pidfd, and `SIGCHLD` (the path kernels
/// without `pidfd_open` take, forced here).
enum ChildWatch: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case pidfd, sigchld
    var usingPidfd: Bool { self == .pidfd }
    var testDescription: String { rawValue }
}

/// Child sources (issue 27, part 1) on the real loop: `/bin/sh -c 'exit 3'`, `/bin/true` and
/// `/bin/sleep` children, each path forced in turn. The SIGCHLD path catches `SIGCHLD` for
/// the whole process while a source lives, and reaps only its own pid, so it runs here beside
/// other tests' children; the tests that reap with `waitpid(-1)` run in child processes.
@Suite("Real time: child processes", .timeLimit(.minutes(10)))
struct ChildSourceTests {
    @Test("an exit status reaches the handler, traced and counted; the child is reaped", arguments: ChildWatch.allCases)
    func exitStatus(watch: ChildWatch) {
        let pid = spawnChild(["/bin/sh", "-c", "sleep 0.05; exit 3"])
        let outcome = onFreshThread { () -> (result: EVRunLoop.RunResult, exit: EVSource.ChildExit?, lines: [String],
                                                valid: Bool, fires: Int, onLoop: Bool) in
            let loop = EVRunLoop.current
            let seen = LoopBox<EVSource.ChildExit?>(nil)
            let onLoop = LoopBox(false)
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            let source = try! EVSource(childProcess: pid, usingPidfd: watch.usingPidfd, label: "child") { source in
                seen.value = source.childExit
                onLoop.value = EVRunLoop.current === loop
            }
            loop.add(source, forMode: .default)
            let result = loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
            loop.trace = nil
            return (result, seen.value, trace.lines.filter { $0.hasPrefix("source") }, source.isValid,
                    loop.statistics.sourceFires, onLoop.value)
        }
        #expect(outcome.result == .handledSource)
        #expect(outcome.exit == .exited(3))
        #expect(outcome.lines == ["source(child)"])
        #expect(outcome.fires == 1)
        #expect(outcome.onLoop)
        #expect(!outcome.valid, "a child source is done once its child exited")
        #expect(!isUnreapedChild(pid), "the source reaped its child")
    }

    @Test("a child killed by a signal reports the signal", arguments: ChildWatch.allCases)
    func terminatingSignal(watch: ChildWatch) {
        let pid = spawnChild(["/bin/sleep", "30"])
        let exit = onFreshThread { () -> EVSource.ChildExit? in
            let loop = EVRunLoop.current
            let seen = LoopBox<EVSource.ChildExit?>(nil)
            let source = try! EVSource(childProcess: pid, usingPidfd: watch.usingPidfd) { seen.value = $0.childExit }
            loop.add(source, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(20))  // watching; the child sleeps
            kill(pid, SIGKILL)
            loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
            return seen.value
        }
        #expect(exit == .signalled(SIGKILL))
        #expect(!isUnreapedChild(pid))
    }

    // The next two run in child processes: there, no other test's child sends a SIGCHLD
    // that would wake the loop and hide a missed check.

    @Test("a child that exited before its source was made fires at the first pass", arguments: ChildWatch.allCases)
    func exitedBeforeAdd(watch: ChildWatch) async {
        let usingPidfd = watch.usingPidfd
        await #expect(processExitsWith: .success) { [usingPidfd = usingPidfd as Bool] in
            let pid = spawnChild(["/bin/true"])
            awaitZombie(pid)  // its SIGCHLD came and went before anything caught it
            let loop = currentLoopOfThisThread()
            let seen = LoopBox<EVSource.ChildExit?>(nil)
            let source = try! EVSource(childProcess: pid, usingPidfd: usingPidfd) { seen.value = $0.childExit }
            loop.add(source, forMode: .default)
            let start = ContinuousClock.now
            let result = loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
            let elapsed = ContinuousClock.now - start
            print("\(result) \(String(describing: seen.value)) after \(elapsed)")
            // The first pass reaps a child that had exited, without waiting.
            exit(result == .handledSource && seen.value == .exited(0) && elapsed < .seconds(5)
                 && !isUnreapedChild(pid) ? 0 : 1)
        }
    }

    @Test("a child that exits while another mode runs is reported when its mode runs, at once",
          arguments: ChildWatch.allCases)
    func onlyInItsMode(watch: ChildWatch) async {
        let usingPidfd = watch.usingPidfd
        await #expect(processExitsWith: .success) { [usingPidfd = usingPidfd as Bool] in
            let pid = spawnChild(["/bin/sh", "-c", "exit 4"])
            let loop = currentLoopOfThisThread()
            let log = Recorder()
            let source = try! EVSource(childProcess: pid, usingPidfd: usingPidfd) { source in
                log.append("exit \(source.childExit.map(String.init(describing:)) ?? "nil")")
            }
            loop.add(source, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: "other")
            let deadline = ContinuousClock.now + .seconds(20)
            while !isZombie(pid), ContinuousClock.now < deadline {  // the exit happens in "other"
                loop.run(mode: "other", for: .milliseconds(10))
            }
            loop.run(mode: "other", for: .milliseconds(20))
            log.append("other done")
            // Nothing reaped the child while its source's mode was not running.
            let stillZombie = isZombie(pid)
            let start = ContinuousClock.now
            loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
            let elapsed = ContinuousClock.now - start
            print(log.lines, stillZombie, elapsed)
            exit(log.lines == ["other done", "exit exited(4)"] && stillZombie && elapsed < .seconds(5)
                 && !isUnreapedChild(pid) ? 0 : 1)
        }
    }

    @Test("a source invalidated before its child exits leaves the child to its starter", arguments: ChildWatch.allCases)
    func invalidatedBeforeExit(watch: ChildWatch) {
        let pid = spawnChild(["/bin/sh", "-c", "exit 6"])
        let fired = onFreshThread { () -> Bool in
            let loop = EVRunLoop.current
            let fired = LoopBox(false)
            let source = try! EVSource(childProcess: pid, usingPidfd: watch.usingPidfd) { _ in fired.value = true }
            loop.add(source, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            source.invalidate()
            awaitZombie(pid)
            loop.run(mode: .default, for: .milliseconds(50))
            return fired.value
        }
        #expect(!fired)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(status >> 8 == 6)
    }

    @Test("a pid that is not a child of this process, or was reaped, is refused with an error naming it")
    func notAChild() {
        #expect {
            _ = try EVSource(childProcess: 1) { _ in }
        } throws: { error in
            guard let error = error as? EVRunLoop.Error else { return false }
            return error.errno == ECHILD && error.call.contains("EVSource(childProcess: 1)")
                && error.call.contains("not a child of this process")
        }
        let pid = spawnChild(["/bin/true"])
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(throws: EVRunLoop.Error.self) { _ = try EVSource(childProcess: pid) { _ in } }
    }

    @Test("a negative pid stops with a message naming the call and the value")
    func negativePid() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try? EVSource(childProcess: -5) { _ in }
        }
        #expect(standardError(result).contains("EVSource(childProcess: -5): process id -5 is not positive"))
    }

    @Test("a loop on a virtual clock refuses a child source with a message")
    func virtualLoopRefuses() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let pid = spawnChild(["/bin/true"])
            let loop = EVRunLoop(clock: EVVirtualClock())
            loop.add(try! EVSource(childProcess: pid) { _ in }, forMode: .default)
        }
        #expect(standardError(result).contains("childProcess("))
        #expect(standardError(result).contains("sources need the real loop"))
    }
}

/// The test of "its own child only": two children, and a `waitpid(-1)` elsewhere in
/// the program. In child processes, since a `waitpid(-1)` would reap other tests' children.
@Suite("Real time: child processes and other reapers", .timeLimit(.minutes(10)))
struct ChildReaperTests {
    @Test("the source reaps its child only: a waitpid(-1) elsewhere still finds the other child",
          arguments: ChildWatch.allCases)
    func ownChildOnly(watch: ChildWatch) async {
        let usingPidfd = watch.usingPidfd
        await #expect(processExitsWith: .success) { [usingPidfd = usingPidfd as Bool] in
            let other = spawnChild(["/bin/sh", "-c", "exit 5"])  // not watched; exits first
            let watched = spawnChild(["/bin/sh", "-c", "sleep 0.2; exit 7"])
            awaitZombie(other)
            let loop = currentLoopOfThisThread()
            let seen = LoopBox<EVSource.ChildExit?>(nil)
            let source = try! EVSource(childProcess: watched, usingPidfd: usingPidfd) { seen.value = $0.childExit }
            loop.add(source, forMode: .default)
            loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
            // Elsewhere in the program, a reaper of any child.
            var status: Int32 = 0
            let reaped = waitpid(-1, &status, 0)
            let code = status >> 8
            let nothingLeft = waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD
            print("source saw \(String(describing: seen.value)); waitpid(-1) got \(reaped) status \(code)")
            exit(seen.value == .exited(7) && reaped == other && code == 5 && nothingLeft ? 0 : 1)
        }
    }

    @Test("after 200 children, one after another, no zombie and no descriptor is left", arguments: ChildWatch.allCases)
    func noLeftovers(watch: ChildWatch) async {
        let usingPidfd = watch.usingPidfd
        // A failed check is a FAIL line (the exit status stays 0, so that the lines reach
        // this side).
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            [usingPidfd = usingPidfd as Bool] in
            let loop = currentLoopOfThisThread()
            func runChild() -> Bool {
                let pid = spawnChild(["/bin/true"])
                let seen = LoopBox<EVSource.ChildExit?>(nil)
                let source = try! EVSource(childProcess: pid, usingPidfd: usingPidfd) { seen.value = $0.childExit }
                loop.add(source, forMode: .default)
                loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
                return seen.value == .exited(0)
            }
            func fail(_ text: String) { FileHandle.standardError.write(Data("FAIL: \(text)\n".utf8)) }
            if !runChild() { fail("the first child's exit was not seen") }  // the loop's own descriptors are made here
            openDispatchTimerDescriptors()
            let before = openDescriptors()
            if !(0..<200).allSatisfy({ _ in runChild() }) { fail("a child's exit was not seen") }
            let left = descriptorsLeftOpen(since: before)
            if !left.isEmpty { fail("left open: \(left.sorted { $0.key < $1.key }); before: \(before.sorted { $0.key < $1.key })") }
            var status: Int32 = 0
            if !(waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD) { fail("a child was left unreaped") }
            exit(0)
        }
        let text = standardError(result)
        #expect(!text.contains("FAIL"), "\(text)")
    }

    @Test("a stale descriptor source whose number a child's pidfd took fails, never fires for the child")
    func stalePidfdNumber() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            let log = Recorder()
            // The pidfd takes the lowest free number, the stale one's, unless another thread
            // of the test process takes or frees a descriptor meanwhile: then again.
            var attempt: (stale: EVSource, child: EVSource)?
            for _ in 0..<20 where attempt == nil {
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else { exit(3) }
                let stale = try! EVSource(fileDescriptor: fds[0], label: "stale") { source in
                    log.append(source.error == nil ? "stale fired" : "stale failed")
                }
                loop.add(stale, forMode: .default)
                loop.run(mode: .default, for: .milliseconds(10))  // the pipe is watched
                close(fds[0])  // while watched: the stale source's number is free
                close(fds[1])
                let pid = spawnChild(["/bin/sh", "-c", "exit 1"])
                let child = try! EVSource(childProcess: pid, usingPidfd: true, label: "child") { source in
                    log.append("child \(source.childExit.map(String.init(describing:)) ?? "nil")")
                }
                if child.fileDescriptor == fds[0] {
                    attempt = (stale, child)
                } else {
                    stale.invalidate()
                    child.invalidate()
                    var status: Int32 = 0
                    waitpid(pid, &status, 0)
                }
            }
            guard let (_, child) = attempt else { exit(4) }
            loop.add(child, forMode: .default)
            let deadline = ContinuousClock.now + .seconds(20)
            while child.isValid, ContinuousClock.now < deadline { loop.run(mode: .default, for: .milliseconds(10)) }
            loop.run(mode: .default, for: .milliseconds(10))
            print(log.lines)
            exit(Set(log.lines) == ["stale failed", "child exited(1)"] && log.lines.count == 2 ? 0 : 1)
        }
    }

    @Test("a child reaped elsewhere first: the handler runs once with the error, no hang",
          arguments: ChildWatch.allCases)
    func reapedElsewhere(watch: ChildWatch) async {
        let usingPidfd = watch.usingPidfd
        await #expect(processExitsWith: .success) { [usingPidfd = usingPidfd as Bool] in
            let pid = spawnChild(["/bin/sh", "-c", "exit 2"])
            let loop = currentLoopOfThisThread()
            let calls = LoopBox(0)
            let failure = LoopBox<EVRunLoop.Error?>(nil)
            let source = try! EVSource(childProcess: pid, usingPidfd: usingPidfd) { source in
                calls.value += 1
                failure.value = source.error
                if source.childExit != nil { calls.value += 100 }
            }
            loop.add(source, forMode: .default)
            var status: Int32 = 0
            let stolen = waitpid(-1, &status, 0)  // before the loop looks
            loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
            loop.run(mode: .default, for: .milliseconds(20))
            let message = failure.value.map(String.init(describing:)) ?? "none"
            print("calls \(calls.value), error \(message)")
            exit(stolen == pid && calls.value == 1 && failure.value?.errno == ECHILD
                 && message.contains("reaped by someone else") && !source.isValid ? 0 : 1)
        }
    }
}
