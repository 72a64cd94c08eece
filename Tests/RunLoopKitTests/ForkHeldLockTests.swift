import Foundation
import Glibc
@testable import RunLoopKit
import RunLoopKitTestSupport
import Synchronization
import Testing

/// fork() while another thread of the parent holds one of the loop's locks: the child's loop
/// stops with a message that names the lock and fork(), never with the runtime's anonymous
/// trap (or a hang), and the parent goes on. The lock is held open at the fork by a test seam
/// (``TestSeams``) at a gate (``HeldLockFork``), so the window is hit every time. Each forks
/// inside a child process of the test runner.
@Suite("Real time: fork while a lock is held", .timeLimit(.minutes(5)))
struct ForkHeldLockTests {
    /// A count shared with another thread.
    final class Counter: Sendable { let value = Atomic(0) }

    /// Runs `loop` until `done` or 10 s pass; whether `done`.
    static func run(_ loop: EVRunLoop, until done: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline { loop.run(mode: .default, for: .milliseconds(10)) }
        return done()
    }

    /// Waits until `done` or 10 s pass; whether `done`.
    static func wait(until done: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline { usleep(1_000) }
        return done()
    }

    /// The exit test's standard error, as text.
    static func text(_ result: ExitTest.Result?) -> String {
        result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
    }

    @Test("fork() while another thread holds the loop's inbox: the child names it and fork(); the parent runs the block")
    func inboxHeldAtFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = currentLoopOfThisThread()
            loop.run(mode: .default, for: .milliseconds(10))
            let gate = HeldLockFork.Gate()
            loop.shared.seams.withLock { $0.performBeforeInboxUnlock = { gate.hold() } }
            let ran = ForkHeldLockTests.Counter()
            Thread.detachNewThread { loop.perform { ran.value.add(1, ordering: .relaxed) } }
            let child = gate.forkWhileHeld(expectingRefusal: ["after fork()", "the loop's inbox"]) {
                loop.run(mode: .default, for: .milliseconds(5))
            }
            let parentRan = ForkHeldLockTests.run(loop) { ran.value.load(ordering: .relaxed) == 1 }
            FileHandle.standardError.write(Data("child: \(child)\nparent ran the block: \(parentRan)\n".utf8))
            exit(0)
        }
        let text = Self.text(result)
        #expect(text.contains("child: refused\n"), "\(text)")
        #expect(text.contains("parent ran the block: true"), "\(text)")
    }

    @Test("fork() while another thread adds a file source to the loop: the child names its file watches and fork()")
    func fileWatchesHeldAtFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let directory = FileManager.default.temporaryDirectory.path + "/runloopkit-heldwatch-\(getpid())"
            mkdir(directory, 0o755)
            let loop = currentLoopOfThisThread()
            // A timer keeps the mode from being empty: the child's run then arms its sources.
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            let gate = HeldLockFork.Gate()
            loop.engine.inotify.registerHoldingTableHookForTests.withLock { $0 = { gate.hold() } }
            let added = ForkHeldLockTests.Counter()
            Thread.detachNewThread {
                loop.add(try! EVSource(watching: directory) { _ in }, forMode: .default)
                added.value.store(1, ordering: .releasing)
            }
            let child = gate.forkWhileHeld(expectingRefusal: ["after fork()", "the loop's file watches"]) {
                loop.run(mode: .default, for: .milliseconds(5))
            }
            let parentAdded = ForkHeldLockTests.run(loop) { added.value.load(ordering: .acquiring) == 1 }
            rmdir(directory)
            FileHandle.standardError.write(Data("child: \(child)\nparent added the source: \(parentAdded)\n".utf8))
            exit(0)
        }
        let text = Self.text(result)
        #expect(text.contains("child: refused\n"), "\(text)")
        #expect(text.contains("parent added the source: true"), "\(text)")
    }

    @Test("fork() while another thread invalidates a timer of the loop: the child names the loop's facade and fork()")
    func facadeHeldAtFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = currentLoopOfThisThread()
            let invalidated = EVTimer(interval: 60, repeats: false) { _ in }
            let kept = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(invalidated, forMode: .default)
            loop.add(kept, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            let gate = HeldLockFork.Gate()
            loop.shared.seams.withLock { $0.loopReadHoldingFacade = { gate.hold() } }
            let done = ForkHeldLockTests.Counter()
            Thread.detachNewThread {
                invalidated.invalidate()
                done.value.store(1, ordering: .releasing)
            }
            let child = gate.forkWhileHeld(expectingRefusal: ["after fork()", "the loop's facade"]) {
                kept.tolerance = 1  // reaches the loop through the facade
                loop.run(mode: .default, for: .milliseconds(5))
            }
            let parentDone = ForkHeldLockTests.run(loop) { done.value.load(ordering: .acquiring) == 1 && !loop.contains(invalidated, inMode: .default) }
            FileHandle.standardError.write(Data("child: \(child)\nparent removed the timer: \(parentDone)\n".utf8))
            exit(0)
        }
        let text = Self.text(result)
        #expect(text.contains("child: refused\n"), "\(text)")
        #expect(text.contains("parent removed the timer: true"), "\(text)")
    }

    /// A lock every shutdown of a startThread loop takes, held open at the fork by its seam.
    enum ShutdownLock: String, Codable, CaseIterable, Sendable {
        /// ``EVRunLoop/hostThread``.
        case hostThread
        /// The loop thread host's shutdown state.
        case state

        var seam: WritableKeyPath<TestSeams, (@Sendable () -> Void)?> {
            switch self {
            case .hostThread: \.shutdownHoldingHostThread
            case .state: \.shutdownHoldingState
            }
        }

        /// What the child's refusal names.
        var name: String {
            switch self {
            case .hostThread: "the loop's thread host"
            case .state: "the shutdown state of the loop's thread"
            }
        }
    }

    @Test("fork() while another thread shuts a startThread loop down, holding a lock: the child's shutdown names it and fork()",
          arguments: ShutdownLock.allCases)
    func shutdownLockHeldAtFork(_ lock: ShutdownLock) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [lock] in
            let loop = EVRunLoop.startThread(name: "held \(lock.rawValue)")
            let gate = HeldLockFork.Gate()
            loop.shared.seams.withLock { $0[keyPath: lock.seam] = { gate.hold() } }
            let done = ForkHeldLockTests.Counter()
            Thread.detachNewThread {
                loop.syncShutdown()
                done.value.store(1, ordering: .releasing)
            }
            let child = gate.forkWhileHeld(expectingRefusal: ["after fork()", lock.name]) {
                loop.syncShutdown()
            }
            let parentDone = ForkHeldLockTests.wait { done.value.load(ordering: .acquiring) == 1 }
            FileHandle.standardError.write(Data("child: \(child)\nparent shut the loop down: \(parentDone)\n".utf8))
            exit(0)
        }
        let text = Self.text(result)
        #expect(text.contains("child: refused\n"), "\(text)")
        #expect(text.contains("parent shut the loop down: true"), "\(text)")
    }

    @Test("fork() while another thread joins a startThread loop's thread: the child's shutdown returns, as its join does")
    func shutdownJoiningAtFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = EVRunLoop.startThread(name: "joining")
            let gate = HeldLockFork.Gate()
            loop.shared.seams.withLock { $0.shutdownBeforeJoin = { gate.hold() } }
            let done = ForkHeldLockTests.Counter()
            Thread.detachNewThread {
                loop.syncShutdown()
                done.value.store(1, ordering: .releasing)
            }
            guard gate.waitUntilHeld() else { FileHandle.standardError.write(Data("never held\n".utf8)); exit(1) }
            let pid = fork()
            if pid == 0 {
                alarm(10)
                loop.syncShutdown()
                _exit(0)
            }
            let child = ForkedScenario.waitForChild(pid)
            gate.letGo()
            let parentDone = ForkHeldLockTests.wait { done.value.load(ordering: .acquiring) == 1 }
            FileHandle.standardError.write(Data("child: exit status \(child)\nparent shut the loop down: \(parentDone)\n".utf8))
            exit(0)
        }
        let text = Self.text(result)
        #expect(text.contains("child: exit status 0\n"), "\(text)")
        #expect(text.contains("parent shut the loop down: true"), "\(text)")
    }
}
