internal import CRunLoopKitLibev
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitTestSupport
import Synchronization
import Testing

/// fork() at the edges the fork work of issue 35 did not aim at: from an observer's callout,
/// a performed block and a loop thread's callout, while another thread's loop resets its
/// figures or never sleeps, with a descriptor number reused while the other process holds the
/// old file, `posix_spawn` (which runs no `pthread_atfork` handler) from a callout, and
/// threads made in the child contending for its loop's locks with the forking thread. Each
/// scenario runs in an exit test's child process, forks there, reaps (or kills, after a
/// deadline) its own children, and says its findings on standard error, its verdict last
/// (``ForkedScenario``).
@Suite("Real time: fork, broken at its edges", .timeLimit(.minutes(10)))
struct ForkBreakTests {
    /// Expects the verdict PASS of a scenario run in a child process of the test runner.
    static func expectPass(_ name: String, _ result: ExitTest.Result?) {
        let (passed, text) = ForkedScenario.outcome(saying: result?.standardErrorContent)
        print("\(name):", text)
        #expect(passed, "\(text)")
    }

    /// Runs `loop` until `done` or `limit` passes; whether `done`.
    static func run(_ loop: EVRunLoop, for limit: Duration = .seconds(5), until done: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + limit
        while !done(), ContinuousClock.now < deadline { loop.run(mode: .default, for: .milliseconds(10)) }
        return done()
    }
}

extension ForkBreakTests {
    /// Where in a run of the forking thread's loop the fork happens.
    enum Callout: String, Codable, CaseIterable, Sendable {
        /// An observer's callout (`beforeWaiting`).
        case observer
        /// A block handed to the loop with `perform`.
        case performedBlock
    }

    @Test("fork() from an observer's or a performed block's callout: the child adds, removes and runs; the parent's timer keeps its time",
          arguments: Callout.allCases)
    func forkFromCallout(_ callout: Callout) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [callout] in
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            let child = LoopBox<pid_t>(-1)
            let forkNow: @Sendable () -> Void = {
                guard child.value < 0 else { return }
                child.value = fork()
            }
            switch callout {
            case .observer:
                loop.add(EVObserver(activities: .beforeWaiting, repeats: false) { _, _ in forkNow() }, forMode: .default)
            case .performedBlock:
                loop.perform(inModes: [.default]) { forkNow() }
            }
            _ = ForkBreakTests.run(loop, for: .seconds(2)) { child.value >= 0 }
            if child.value == 0 {
                // The child: a timer removed before it fires never fires; one added fires;
                // the next fire date is the child's own.
                let removedFired = LoopBox(false)
                let removed = EVTimer(interval: .milliseconds(30), repeats: false) { _ in removedFired.value = true }
                loop.add(removed, forMode: .default)
                let fired = LoopBox(0)
                loop.add(EVTimer(interval: .milliseconds(20), repeats: true) { _ in fired.value += 1 }, forMode: .default)
                loop.remove(removed, forMode: .default)
                let next = loop.nextTimerFireDate(forMode: .default)
                let nextSoon = next.map { $0.timeIntervalSinceNow < 1 } ?? false
                _ = ForkBreakTests.run(loop) { fired.value >= 3 }
                // (Threads of the child's own contending with this one: childThreadsContend.)
                let verdict = fired.value >= 3 && !removedFired.value && nextSoon
                if !verdict {
                    ForkedScenario.say("child: fired \(fired.value), removed fired \(removedFired.value), next \(String(describing: next))")
                }
                _exit(verdict ? 0 : 1)
            }
            // The parent: a 300 ms timer while the child runs and exits.
            let firedAfter = LoopBox<Duration?>(nil)
            let parentStart = ContinuousClock.now
            loop.add(EVTimer(interval: .milliseconds(300), repeats: false) { _ in firedAfter.value = ContinuousClock.now - parentStart },
                     forMode: .default)
            _ = ForkBreakTests.run(loop) { firedAfter.value != nil }
            let status = ForkedScenario.reapChild(child.value)
            let late = firedAfter.value
            let onTime = late.map { $0 >= .milliseconds(300) && $0 < .milliseconds(1_000) } ?? false
            if !onTime { ForkedScenario.say("parent: its 300 ms timer fired after \(String(describing: late))") }
            ForkedScenario.finish(status == 0 && onTime)
        }
        Self.expectPass("\(callout)", result)
    }
}

extension ForkBreakTests {
    @Test("fork() while another thread's loop resets its metrics: reading that loop's figures in the child returns")
    func forkWhileMetricsReset() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let made = Mutex<EVRunLoop?>(nil)
            let gate = ForkHeldLockTests.Counter()
            Thread.detachNewThread {
                let loop = EVRunLoop.current
                loop.recordsMetrics = true
                made.withLock { $0 = loop }
                while true {
                    if gate.value.load(ordering: .acquiring) == 1 { loop.resetMetrics() } else { usleep(500) }
                }
            }
            var other: EVRunLoop?
            while other == nil { other = made.withLock { $0 }; usleep(1_000) }
            let loop = other!
            let count = 10
            var failed = 0
            var first = ""
            for index in 0..<count {
                gate.value.store(1, ordering: .releasing)
                usleep(1_000)
                let pid = fork()
                if pid == 0 {
                        _ = loop.metrics
                    _exit(0)
                }
                gate.value.store(0, ordering: .releasing)
                if !ForkTests.childPassed(pid, within: .seconds(5)) {
                    if failed == 0 { first = "child \(index) did not exit 0 in 5 s" }
                    failed += 1
                }
            }
            ForkedScenario.say("\(failed) of \(count) children failed\(failed > 0 ? " (\(first))" : "")")
            ForkedScenario.finish(failed == 0)
        }
        Self.expectPass("metrics reset at fork", result)
    }
}

extension ForkBreakTests {
    @Test("fork() from a callout on a loop thread (in the grandchild too): in the child, syncShutdown() from another thread waits for the loop's thread, which the child has",
          arguments: [1, 2])
    func shutdownForkedLoopThread(forks: Int) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [forks] in
            let loop = EVRunLoop.startThread(name: "fork-loop")
            let child = ForkHeldLockTests.Counter()
            child.value.store(-1, ordering: .releasing)
            loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in
                let pid = fork()
                guard pid == 0 else { return child.value.store(Int(pid), ordering: .releasing) }
                if forks == 2 {
                    // The child forks again on the same thread; it reaps the grandchild.
                    let second = fork()
                    if second != 0 { _exit(ForkedScenario.reapChild(second) == 0 ? 0 : 1) }
                }
                // The child: its only thread is this one, the loop's, in a callout. Another
                // thread shuts the loop down while the callout goes on for 300 ms.
                let calloutEnded = ForkHeldLockTests.Counter()
                Thread.detachNewThread {
                    usleep(20_000)
                    loop.syncShutdown()
                    let ended = calloutEnded.value.load(ordering: .acquiring) == 1
                    if !ended { ForkedScenario.say("child: syncShutdown() returned while the loop's thread was in its callout") }
                    _exit(ended ? 0 : 1)
                }
                usleep(300_000)
                calloutEnded.value.store(1, ordering: .releasing)
            }, forMode: .default)
            let end = ContinuousClock.now + .seconds(10)
            while child.value.load(ordering: .acquiring) < 0, ContinuousClock.now < end { usleep(1_000) }
            let status = ForkedScenario.reapChild(pid_t(child.value.load(ordering: .acquiring)))
            loop.syncShutdown()
            ForkedScenario.finish(status == 0)
        }
        Self.expectPass("loop thread shut down after \(forks) fork(s)", result)
    }
}

extension ForkBreakTests {
    /// A kind of descriptor a source watches.
    enum DescriptorKind: String, Codable, CaseIterable, Sendable {
        case pipe, socket, eventfd, timerfd
    }

    /// Which process closes the watched descriptor and reuses its number.
    enum Side: String, Codable, CaseIterable, Sendable {
        case parent, child
    }

    /// A descriptor of `kind` that is not readable, and a descriptor that makes it readable
    /// (a pipe's write end, a socket's peer; the descriptor itself for an eventfd and a
    /// timerfd). `fd` is `number` when it is given.
    static func makeDescriptor(_ kind: DescriptorKind, at number: Int32? = nil) -> (fd: Int32, other: Int32) {
        var pair: [Int32] = [-1, -1]
        switch kind {
        case .pipe: _ = pipe(&pair)
        case .socket: _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair)
        case .eventfd: pair[0] = clibev_eventfd_create()
        case .timerfd: pair[0] = clibev_timerfd_create(0)
        }
        guard pair[0] >= 0 else { _exit(90) }
        if let number, pair[0] != number {
            guard clibev_dup_onto(pair[0], number) == number else { _exit(91) }
            close(pair[0])
            pair[0] = number
        }
        return (pair[0], pair[1] >= 0 ? pair[1] : pair[0])
    }

    /// Makes the descriptor of `kind` that `other` belongs to readable.
    static func makeReadable(_ kind: DescriptorKind, _ other: Int32) {
        switch kind {
        case .pipe, .socket: _ = write(other, "x", 1)
        case .eventfd: _ = clibev_eventfd_increment(other)
        case .timerfd: _ = clibev_timerfd_arm(other, clibev_monotonic_ns() + 1_000_000, 0)
        }
    }

    /// Whether `fd` is readable now.
    static func isReadable(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    @Test("a descriptor closed and its number reused while the other process holds the old file: that file's readiness never fires the new source",
          arguments: DescriptorKind.allCases, Side.allCases)
    func reuseWhileOtherProcessHoldsFile(_ kind: DescriptorKind, _ side: Side) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [kind, side] in
            let loop = currentLoopOfThisThread()
            let old = ForkBreakTests.makeDescriptor(kind)
            let oldSource = try! EVSource(fileDescriptor: old.fd) { _ in }
            loop.add(oldSource, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(20))  // the old file in the loop's epoll instance
            var go: [Int32] = [-1, -1]
            guard pipe(&go) == 0 else { _exit(92) }
            let child = fork()
            let reuses = (child == 0) == (side == .child)
            if !reuses {
                // Holds the old file while the other process closes it and reuses its
                // number; then makes the old file readable.
                if child == 0 { close(go[1]) }
                var byte: UInt8 = 0
                _ = read(go[0], &byte, 1)
                ForkBreakTests.makeReadable(kind, old.other)
                if child == 0 {
                    usleep(1_500_000)
                    _exit(0)
                }
                let status = ForkedScenario.reapChild(child)
                ForkedScenario.finish(status == 0)
            }
            if child == 0 { loop.run(mode: .default, for: .milliseconds(20)) }  // the child's own epoll instance
            oldSource.invalidate()
            close(old.fd)
            let new = ForkBreakTests.makeDescriptor(kind, at: old.fd)
            let spurious = LoopBox(0)
            let fired = LoopBox(false)
            loop.add(try! EVSource(fileDescriptor: new.fd) { source in
                if ForkBreakTests.isReadable(new.fd) {
                    fired.value = true
                    source.invalidate()
                } else {
                    spurious.value += 1
                }
            }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(30))
            _ = write(go[1], "x", 1)
            loop.run(mode: .default, for: .milliseconds(500))
            let early = fired.value
            ForkBreakTests.makeReadable(kind, new.other)
            _ = ForkBreakTests.run(loop, for: .seconds(3)) { fired.value }
            let mine = spurious.value == 0 && !early && fired.value
            if !mine {
                ForkedScenario.say("\(side): the new source fired \(spurious.value) times for the old file, early \(early), fired \(fired.value)")
            }
            if child == 0 { _exit(mine ? 0 : 1) }
            let status = ForkedScenario.reapChild(child)
            ForkedScenario.finish(mine && status == 0)
        }
        Self.expectPass("\(kind), reused in the \(side)", result)
    }
}

extension ForkBreakTests {
    @Test("posix_spawn from a callout while other threads' loops run: every program's exit reaches its source, the other loops keep firing")
    func spawnFromCallout() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let others = [EVRunLoop.startThread(name: "spawn-a"), EVRunLoop.startThread(name: "spawn-b")]
            let fires = [ForkHeldLockTests.Counter(), ForkHeldLockTests.Counter()]
            for (other, count) in zip(others, fires) {
                other.add(EVTimer(interval: .milliseconds(5), repeats: true) { _ in count.value.add(1, ordering: .relaxed) },
                          forMode: .default)
            }
            let loop = currentLoopOfThisThread()
            let programs = 20
            let spawned = LoopBox(0)
            let exited = LoopBox(0)
            loop.add(EVTimer(interval: .milliseconds(10), repeats: true) { timer in
                let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
                defer { free(arguments[0]) }
                var pid: pid_t = 0
                let status = arguments.withUnsafeBufferPointer {
                    posix_spawn(&pid, "/bin/true", nil, nil, UnsafeMutablePointer(mutating: $0.baseAddress!), environ)
                }
                guard status == 0 else { return ForkedScenario.say("posix_spawn: \(status)") }
                loop.add(try! EVSource(childProcess: pid) { source in
                    if source.childExit == .exited(0) { exited.value += 1 }
                }, forMode: .default)
                spawned.value += 1
                if spawned.value == programs { timer.invalidate() }
            }, forMode: .default)
            let before = fires.map { $0.value.load(ordering: .relaxed) }
            let start = ContinuousClock.now
            let done = ForkBreakTests.run(loop, for: .seconds(10)) { exited.value == programs }
            let elapsed = ContinuousClock.now - start
            let after = fires.map { $0.value.load(ordering: .relaxed) }
            for other in others { other.syncShutdown() }
            // Each other loop fired at least once per 50 ms of the run.
            let minimum = Int(elapsed / .milliseconds(50))
            let kept = zip(before, after).allSatisfy { $1 - $0 >= minimum }
            ForkedScenario.say("\(exited.value) of \(programs) exits in \(elapsed); other loops fired \(zip(before, after).map { $1 - $0 }) (at least \(minimum))")
            ForkedScenario.finish(done && kept)
        }
        Self.expectPass("posix_spawn", result)
    }
}

extension ForkBreakTests {
    @Test("fork() while another thread's loop is mid-pass: the child's own loop runs, and calls on the busy loop's copy return")
    func forkWhileAnotherLoopIsMidPass() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // Another thread's loop never sleeps: an idle source and a 0 s timer keep it in passes.
            let busy = EVRunLoop.startThread(name: "fork-busy")
            let passes = ForkHeldLockTests.Counter()
            busy.add(EVSource.idle { _ in passes.value.add(1, ordering: .relaxed) }, forMode: .default)
            busy.add(EVTimer(interval: .zero, repeats: true) { _ in }, forMode: .default)
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(20))
            let count = 30
            var failed = 0
            var first = ""
            for index in 0..<count {
                usleep(2_000)
                let pid = fork()
                if pid == 0 {
                    busy.wakeUp()
                    busy.stop()
                    let fired = LoopBox(false)
                    loop.add(EVTimer(interval: .milliseconds(5), repeats: false) { _ in fired.value = true }, forMode: .default)
                    _ = ForkBreakTests.run(loop) { fired.value }
                    _exit(fired.value ? 0 : 1)
                }
                if !ForkTests.childPassed(pid, within: .seconds(10)) {
                    if failed == 0 { first = "child \(index) did not exit 0 in 10 s" }
                    failed += 1
                }
            }
            busy.syncShutdown()
            ForkedScenario.say("\(failed) of \(count) children failed\(failed > 0 ? " (\(first))" : ""); the busy loop made \(passes.value.load(ordering: .relaxed)) idle callouts")
            ForkedScenario.finish(failed == 0)
        }
        Self.expectPass("fork while another loop is mid-pass", result)
    }
}

extension ForkBreakTests {
    @Test("threads made in a forked child contend for its loop's inbox, facade and file watches: none is refused")
    func childThreadsContend() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let directory = FileManager.default.temporaryDirectory.path + "/runloopkit-forkcontend-\(getpid())"
            mkdir(directory, 0o755)
            let loop = currentLoopOfThisThread()
            let timer = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(timer, forMode: .default)
            loop.add(try! EVSource(watching: directory) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(20))
            let child = fork()
            if child == 0 {
                let ran = ForkHeldLockTests.Counter()
                let added = ForkHeldLockTests.Counter()
                let threads = 4
                let blocks = 2_000
                for index in 0..<threads {
                    Thread.detachNewThread {
                        for step in 0..<blocks {
                            loop.perform { ran.value.add(1, ordering: .relaxed) }  // the inbox
                            timer.tolerance = Double(step % 7) / 1_000  // the facade
                            if step % 100 == 0 {  // the file watches
                                let file = directory + "/f\(index)-\(step)"
                                FileWatchScaleTests.touch(file)
                                loop.add(try! EVSource(watching: file, for: .modified) { _ in }, forMode: .default)
                                added.value.add(1, ordering: .relaxed)
                            }
                        }
                    }
                }
                let done = ForkBreakTests.run(loop, for: .seconds(15)) {
                    ran.value.load(ordering: .relaxed) == threads * blocks && added.value.load(ordering: .relaxed) == threads * blocks / 100
                }
                if !done { ForkedScenario.say("child: \(ran.value.load(ordering: .relaxed)) blocks ran, \(added.value.load(ordering: .relaxed)) sources added") }
                _exit(done ? 0 : 1)
            }
            let status = ForkedScenario.reapChild(child)
            try? FileManager.default.removeItem(atPath: directory)
            ForkedScenario.finish(status == 0)
        }
        Self.expectPass("child threads contend", result)
    }
}

