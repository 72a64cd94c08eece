import Foundation
import Glibc
import RunLoopKit
import RunLoopKitTestSupport
import Synchronization
import Testing

/// The fork half of the lifecycle matrix (issue 35): `fork()` from each state of a loop, with
/// each kind of source in it. In the child the loop works with kernel objects of its own, or,
/// when its thread is not in the child (only the thread that called `fork()` is), the calls
/// on it are harmless and `syncShutdown()` returns; the parent is never disturbed: its 300 ms
/// timer fires on time and its source still fires. Each scenario runs in a child process of
/// the test runner and forks there. (File sources, and GLib's kinds, are elsewhere:
/// `GLibForkTests` in RunLoopKitGLibTests.)
@Suite("Real time: fork from each state with each kind of source", .timeLimit(.minutes(10)))
struct ForkMatrixTests {
    @Test("fork() from a state, with a kind of source", arguments: ForkScenario.State.allCases, ForkScenario.Kind.allCases)
    func forkFrom(_ state: ForkScenario.State, with kind: ForkScenario.Kind) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [state, kind] in
            ForkScenario(state: state, kind: kind).run()
        }
        let (passed, text) = ForkedScenario.outcome(saying: result?.standardErrorContent)
        print("\(state), \(kind):", text)
        #expect(passed, "\(text)")
    }
}

/// One scenario of ``ForkMatrixTests``, run in a process of its own.
struct ForkScenario {
    /// Where the loop is when another part of the program calls `fork()`.
    enum State: String, Codable, CaseIterable, Sendable {
        /// Not running; the loop's own thread forks.
        case idle
        /// Running (asleep) on another thread; this thread forks, so the loop's thread is
        /// not in the child.
        case asleepOnAnotherThread
        /// In a timer's callout of a run; the callout forks.
        case inCallout
        /// In a callout of a run nested in another callout; the inner callout forks.
        case inNestedRun
    }

    /// The kind of source the loop holds at the fork.
    enum Kind: String, Codable, CaseIterable, Sendable {
        case timer, descriptor, signal, child, idle
        /// The loop is one `EVRunLoop.startThread` made.
        case loopThread
    }

    let state: State
    let kind: Kind

    /// What each process saw after the fork.
    final class Progress: Sendable {
        struct Values {
            var forkedAt: ContinuousClock.Instant?
            var isChild = false
            var timerFiredAfter: Duration?
            var kindFired = false
            var kindError: String?
        }
        let values = Mutex(Values())
        func update(_ body: (inout Values) -> Void) { values.withLock { body(&$0) } }
        var snapshot: Values { values.withLock { $0 } }
    }

    /// The kind's objects, made before the fork.
    struct Fixture: Sendable {
        var parentPipe: (read: Int32, write: Int32) = (-1, -1)
        var childPipe: (read: Int32, write: Int32) = (-1, -1)
        var grandchild: pid_t = 0
        var grandchildGo: Int32 = -1
    }

    static func makePipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { _exit(90) }
        return (fds[0], fds[1])
    }


    /// Adds the kind's source to `loop` (on its thread, before the fork).
    func addSource(to loop: EVRunLoop, fixture: inout Fixture, progress: Progress) {
        let afterFork: @Sendable () -> Bool = { progress.snapshot.forkedAt != nil }
        switch kind {
        case .timer:
            loop.add(EVTimer(interval: .milliseconds(50), repeats: true) { _ in
                if afterFork() { progress.update { $0.kindFired = true } }
            }, forMode: .default)
        case .descriptor:
            fixture.parentPipe = Self.makePipe()
            fixture.childPipe = Self.makePipe()
            // One source per pipe, each invalidated at its first readiness (nothing is read:
            // both processes hold both pipes).
            for (descriptor, isChilds) in [(fixture.parentPipe.read, false), (fixture.childPipe.read, true)] {
                loop.add(try! EVSource(fileDescriptor: descriptor) { source in
                    source.invalidate()
                    progress.update { if $0.isChild == isChilds { $0.kindFired = true } }
                }, forMode: .default)
            }
        case .signal:
            loop.add(EVSource(signal: SIGUSR2) { _ in
                if afterFork() { progress.update { $0.kindFired = true } }
            }, forMode: .default)
        case .child:
            let go = Self.makePipe()
            let pid = fork()
            if pid == 0 {
                // Its own copy of the write end closed: if the scenario's process dies before
                // it writes, the read ends (EOF), and the test's output pipe with it.
                close(go.write)
                var byte: UInt8 = 0
                _ = read(go.read, &byte, 1)
                _exit(0)
            }
            fixture.grandchild = pid
            fixture.grandchildGo = go.write
            loop.add(try! EVSource(childProcess: pid) { source in
                progress.update { values in
                    if values.isChild {
                        // The parent's child is not the child's: its copy may report that
                        // (ECHILD), never an exit.
                        if source.childExit != nil || source.error == nil {
                            values.kindError = "the child's copy of the parent's child source fired: \(String(describing: source.childExit)), \(String(describing: source.error))"
                        }
                    } else if source.childExit == .exited(0) {
                        values.kindFired = true
                    } else {
                        values.kindError = "the parent's child source saw \(String(describing: source.childExit)), \(String(describing: source.error))"
                    }
                }
            }, forMode: .default)
        case .idle:
            loop.add(EVSource.idle { source in
                guard afterFork() else { return }
                source.invalidate()
                progress.update { $0.kindFired = true }
            }, forMode: .default)
        case .loopThread:
            break  // the loop itself is the kind
        }
    }

    /// Right after the fork, on the loop's thread (or, when the loop's thread is another one,
    /// on the forking thread): the process's timer, and the event its source waits for.
    func afterFork(on loop: EVRunLoop, isChild: Bool, fixture: Fixture, progress: Progress) {
        let start = ContinuousClock.now
        progress.update {
            $0.forkedAt = start
            $0.isChild = isChild
        }
        let interval: Duration = isChild ? .milliseconds(20) : .milliseconds(300)
        loop.add(EVTimer(interval: interval, repeats: false) { _ in
            progress.update { $0.timerFiredAfter = ContinuousClock.now - start }
        }, forMode: .default)
        switch kind {
        case .timer, .idle:
            break
        case .descriptor:
            _ = write(isChild ? fixture.childPipe.write : fixture.parentPipe.write, "x", 1)
        case .signal:
            kill(getpid(), SIGUSR2)
        case .child:
            if isChild {
                // A child of the child's own: its source works in the child.
                let pid = fork()
                if pid == 0 { _exit(5) }
                loop.add(try! EVSource(childProcess: pid) { source in
                    progress.update { $0.kindFired = source.childExit == .exited(5) }
                }, forMode: .default)
            } else {
                _ = write(fixture.grandchildGo, "x", 1)
            }
        case .loopThread:
            loop.perform { progress.update { $0.kindFired = true } }
        }
    }

    /// In the child, once it saw what it waits for: a later deadline while the parent waits
    /// for its 300 ms (on shared kernel objects, it would replace the parent's).
    func linger(on loop: EVRunLoop) {
        loop.add(EVTimer(interval: 2, repeats: false) { _ in }, forMode: .default)
    }

    /// Whether the process saw all it waits for.
    static func isDone(_ values: Progress.Values) -> Bool {
        values.timerFiredAfter != nil && values.kindFired
    }

    /// The process's verdict: 0, or a code with its reason said.
    func verdict(_ values: Progress.Values) -> Int32 {
        let side = values.isChild ? "child" : "parent"
        if let error = values.kindError {
            ForkedScenario.say("\(side): \(error)")
            return 10
        }
        guard let late = values.timerFiredAfter else {
            ForkedScenario.say("\(side): its timer never fired")
            return 11
        }
        if !values.isChild && !(late >= .milliseconds(300) && late < .milliseconds(1_000)) {
            ForkedScenario.say("parent: its 300 ms timer fired after \(late)")
            return 12
        }
        guard values.kindFired else {
            ForkedScenario.say("\(side): its \(kind) source did not fire")
            return 13
        }
        return 0
    }

    /// Waits up to 5 s on this thread, which is not the loop's, for `progress` to be done.
    static func poll(_ progress: Progress) -> Progress.Values {
        let end = ContinuousClock.now + .seconds(5)
        while !isDone(progress.snapshot), ContinuousClock.now < end { usleep(2_000) }
        return progress.snapshot
    }

    func run() -> Never {
        let progress = Progress()
        var holder: LoopThread?
        let loop: EVRunLoop
        if kind == .loopThread {
            loop = EVRunLoop.startThread(name: "fork-subject")
        } else if state == .asleepOnAnotherThread {
            holder = LoopThread()
            loop = holder!.loop
        } else {
            loop = currentLoopOfThisThread()
        }
        let onLoopThread = kind != .loopThread && state != .asleepOnAnotherThread
        let forksOnLoopThread = onLoopThread || state == .inCallout || state == .inNestedRun
        var fixture = Fixture()
        if onLoopThread {
            addSource(to: loop, fixture: &fixture, progress: progress)
            loop.run(mode: .default, for: .milliseconds(20))  // the epoll instance and timerfds in use
        } else {
            let made = Mutex<Fixture?>(nil)
            let scenario = self
            let done = DispatchSemaphore(value: 0)
            loop.perform {
                var fixture = Fixture()
                scenario.addSource(to: loop, fixture: &fixture, progress: progress)
                made.withLock { $0 = fixture }
                done.signal()
            }
            done.wait()
            fixture = made.withLock { $0! }
            usleep(20_000)
        }
        if !forksOnLoopThread {
            // This thread forks while the loop runs (asleep) on its own.
            let child = fork()
            if child == 0 {
                // The loop's thread is not here: calls on the loop must not reach the
                // parent's loop, nor hang.
                loop.perform { _exit(20) }
                loop.wakeUp()
                loop.stop()
                if kind == .loopThread { loop.syncShutdown() }
                _exit(0)
            }
            afterFork(on: loop, isChild: false, fixture: fixture, progress: progress)
            let parent = verdict(Self.poll(progress))
            let childStatus = ForkedScenario.reapChild(child)
            if kind == .loopThread { loop.syncShutdown() } else { holder?.stop() }
            ForkedScenario.finish(parent == 0 && childStatus == 0)
        }
        if state == .idle {
            let child = fork()
            afterFork(on: loop, isChild: child == 0, fixture: fixture, progress: progress)
            let end = ContinuousClock.now + .seconds(5)
            while !Self.isDone(progress.snapshot), ContinuousClock.now < end {
                loop.run(mode: .default, for: .milliseconds(20))
            }
            let mine = verdict(progress.snapshot)
            if child == 0 {
                linger(on: loop)
                loop.run(mode: .default, for: .milliseconds(500))
                _exit(mine)
            }
            let childStatus = ForkedScenario.reapChild(child)
            ForkedScenario.finish(mine == 0 && childStatus == 0)
        }
        // In a callout, or in a callout of a nested run: the loop's thread forks there.
        let childSlot = Mutex<pid_t>(-1)
        let scenario = self
        let forkingFixture = fixture
        let forkNow: @Sendable () -> Void = {
            let child = fork()
            if child != 0 { childSlot.withLock { $0 = child } }
            scenario.afterFork(on: loop, isChild: child == 0, fixture: forkingFixture, progress: progress)
        }
        let nested = state == .inNestedRun
        let checkEnd = ContinuousClock.now + .seconds(5)
        let start: @Sendable () -> Void = {
            // Ends every run once this process saw what it waits for (the child exits there).
            loop.add(EVTimer(interval: .milliseconds(5), repeats: true) { timer in
                let values = progress.snapshot
                guard values.forkedAt != nil, Self.isDone(values) || ContinuousClock.now > checkEnd else { return }
                timer.invalidate()
                if values.isChild {
                    let mine = scenario.verdict(values)
                    scenario.linger(on: loop)
                    loop.add(EVTimer(interval: 0.5, repeats: false) { _ in _exit(mine) }, forMode: .default)
                    return
                }
                loop.stop()
            }, forMode: .default)
            loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in
                guard nested else { return forkNow() }
                loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in forkNow() }, forMode: .default)
                loop.run(mode: .default, for: .seconds(6))
                loop.stop()  // the outer run too
            }, forMode: .default)
        }
        if onLoopThread {
            start()
            loop.run(mode: .default, for: .seconds(8))
        } else {
            loop.perform(start)
            _ = Self.poll(progress)
            usleep(20_000)
        }
        let mine = verdict(progress.snapshot)
        let child = childSlot.withLock { $0 }
        let childStatus = ForkedScenario.reapChild(child)
        if kind == .loopThread { loop.syncShutdown() }
        ForkedScenario.finish(mine == 0 && childStatus == 0)
    }
}
