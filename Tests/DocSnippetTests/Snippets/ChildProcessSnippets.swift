import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

// ChildProcesses.md and `waitForExit(ofChild:)`'s doc comment: compiled and run.

// snippet: child-run-with-timeout
/// Runs `/bin/sh -c command` and kills it after `timeout` seconds; returns how it ended, or
/// nil if something else reaped it. Call it on a thread whose loop nothing else runs.
func run(_ command: String, timeout: TimeInterval) throws -> EVSource.ChildExit? {
    let arguments = ["/bin/sh", "-c", command]
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var spawned: pid_t = 0
    let status = posix_spawn(&spawned, "/bin/sh", nil, nil, argv, environ)
    guard status == 0 else { throw EVRunLoop.Error(call: "posix_spawn", errno: status) }
    let pid = spawned

    let loop = EVRunLoop.current
    let child = try EVSource(childProcess: pid, label: "child") { _ in loop.stop() }
    let deadline = EVTimer(interval: timeout, repeats: false) { _ in kill(pid, SIGKILL) }
    loop.add(child, forMode: .default)
    loop.add(deadline, forMode: .default)
    loop.run()  // until the child exits (killed or not) and its source stops the run
    deadline.invalidate()
    return child.childExit  // the source reaped the child: no zombie is left
}
// end

/// Starts `/bin/sh -c command` for the async snippet.
func spawnShell(_ command: String) -> pid_t {
    var pid: pid_t = 0
    let arguments = ["/bin/sh", "-c", command]
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    precondition(posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0)
    return pid
}

/// A loop run on a thread of its own until `stop` is set.
final class ChildLoopThread: Sendable {
    let loop: EVRunLoop
    private let stopping = Handoff(false)
    private let done = DispatchSemaphore(value: 0)

    init() {
        let made = Handoff<EVRunLoop?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let (stopping, done) = (stopping, done)
        Thread.detachNewThread {
            let loop = EVRunLoop.current
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            made.value.withLock { $0 = loop }
            ready.signal()
            while !stopping.value.withLock({ $0 }) { loop.run(mode: .default, for: .milliseconds(100)) }
            keepAlive.invalidate()
            done.signal()
        }
        ready.wait()
        loop = made.value.withLock { $0! }
    }

    func stop() {
        stopping.value.withLock { $0 = true }
        loop.wakeUp()
        done.wait()
    }
}

@Suite struct ChildProcessSnippetTests {
    @Test("the article's run(_:timeout:) reports an exit status, and kills at the timeout")
    func runWithTimeout() async throws {
        let (exited, killed, elapsed) = try await onThread { () throws -> (EVSource.ChildExit?, EVSource.ChildExit?, Duration) in
            let exited = try run("exit 3", timeout: 20)
            let start = ContinuousClock.now
            let killed = try run("sleep 30", timeout: 0.2)
            return (exited, killed, ContinuousClock.now - start)
        }
        #expect(exited == .exited(3))
        #expect(killed == .signalled(SIGKILL))
        #expect(elapsed < .seconds(10))
    }

    @Test("waitForExit(ofChild:)'s doc example")
    func waitForExitDoc() async throws {
        let thread = ChildLoopThread()
        defer { thread.stop() }
        let loop = thread.loop
        let pid = spawnShell("exit 3")
        // snippet: child-wait-for-exit-doc
        let exit = try await loop.waitForExit(ofChild: pid)   // the loop runs on its own thread
        print(exit)   // exited(3), or signalled(9)
        // end
        #expect(exit == .exited(3))
    }

    /// Runs `body` on a new thread (its own loop) and returns what it returned, suspending the
    /// caller meanwhile: the body waits for real processes, and a blocking wait would hold a
    /// thread of the cooperative pool for that long.
    private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}
