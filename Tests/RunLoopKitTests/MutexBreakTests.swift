import Foundation
import Glibc
@testable import RunLoopKit
@testable import RunLoopKitPlatform
import RunLoopKitTestSupport
import Synchronization
import Testing

/// The platform's futex mutex (every lock of RunLoopKit's modules) pushed where a lock
/// breaks: many threads with short and long holds and tries, signals to a thread asleep in
/// the futex, bodies that throw, a loop's inbox fed by many threads, and a forked child whose
/// copy of one of the loop's locks a thread of the parent held.
@Suite("Real time: breaking the futex mutex", .timeLimit(.minutes(5)))
struct MutexBreakTests {
    /// A count shared with other threads.
    typealias Counter = ForkHeldLockTests.Counter

    /// Signals the signal test's handler ran.
    static let handled = Atomic(0)

    /// Waits until `done` or `seconds` pass; whether `done`.
    static func wait(seconds: Int = 30, until done: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !done(), ContinuousClock.now < deadline { usleep(1_000) }
        return done()
    }

    /// One increment under the lock, counting a body that found another inside; `long`: the
    /// body sleeps, so that the other threads sleep in the futex meanwhile.
    static func enter(_ state: inout (count: Int, inside: Bool, overlaps: Int), long: Bool) {
        if state.inside { state.overlaps += 1 }
        state.inside = true
        state.count += 1
        if long { usleep(50) }
        state.inside = false
    }

    @Test("12 threads for 2 s, short and long holds and tries: every increment counted, no overlap, every thread ends")
    func hammer() {
        let lock = RunLoopKitPlatform.Mutex((count: 0, inside: false, overlaps: 0))
        let finished = Counter()
        let increments = Counter()
        let threads = 12
        let end = ContinuousClock.now + .seconds(2)
        for thread in 0..<threads {
            Thread.detachNewThread {
                var mine = 0
                var step = thread
                while ContinuousClock.now < end {
                    step &+= 1
                    let long = step % 64 == 0
                    if step % 4 == 0 {
                        if lock.withLockIfAvailable({ Self.enter(&$0, long: long) }) != nil { mine += 1 }
                    } else {
                        lock.withLock { Self.enter(&$0, long: long) }
                        mine += 1
                    }
                }
                increments.value.add(mine, ordering: .relaxed)
                finished.value.add(1, ordering: .releasing)
            }
        }
        let allEnded = Self.wait { finished.value.load(ordering: .acquiring) == threads }
        #expect(allEnded, "\(finished.value.load(ordering: .acquiring)) of \(threads) threads ended")
        let state = lock.withLock { $0 }
        let counted = increments.value.load(ordering: .relaxed)
        #expect(state.count == counted, "count \(state.count), increments \(counted)")
        #expect(state.overlaps == 0)
        #expect(lock.withLockIfAvailable { _ in true } == true)
    }

#if !RUNLOOPKIT_TSAN_PTHREAD_MUTEX  // the futex's word; ThreadSanitizer's run has a pthread mutex instead
    @Test("signals to a thread asleep in the futex (handlers with and without SA_RESTART): it waits on, then takes the lock")
    func signalsWhileWaiting() async {
        // In a child process: the handlers are the process's.
        await #expect(processExitsWith: .success) {
            for (signal, flags) in [(SIGUSR1, Int32(SA_RESTART)), (SIGUSR2, Int32(0))] {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { _ in MutexBreakTests.handled.add(1, ordering: .relaxed) }
                action.sa_flags = flags
                sigemptyset(&action.sa_mask)
                sigaction(signal, &action, nil)
            }
            let lock = RunLoopKitPlatform.Mutex(0)
            let waiter = RunLoopKitPlatform.Mutex<pthread_t?>(nil)
            let took = Counter()
            lock.withLock { value in
                Thread.detachNewThread {
                    // A thread made from the exit test's (a dispatch worker) inherits its blocked signals.
                    var signals = sigset_t()
                    sigemptyset(&signals)
                    sigaddset(&signals, SIGUSR1)
                    sigaddset(&signals, SIGUSR2)
                    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
                    waiter.withLock { $0 = pthread_self() }
                    lock.withLock { $0 += 1 }
                    took.value.store(1, ordering: .releasing)
                }
                // The waiter marked the word waited for: it sleeps in FUTEX_WAIT, or is about to.
                guard MutexBreakTests.wait(until: { lock.word.load(ordering: .relaxed) == 2 }),
                      let thread = waiter.withLock({ $0 }) else { exit(2) }
                // One at a time, each handled before the next (a pending signal would absorb a second).
                for round in 0..<100 {
                    pthread_kill(thread, round % 2 == 0 ? SIGUSR1 : SIGUSR2)
                    guard MutexBreakTests.wait(until: { MutexBreakTests.handled.load(ordering: .relaxed) == round + 1 }) else { exit(3) }
                    guard MutexBreakTests.wait(until: { lock.word.load(ordering: .relaxed) == 2 }) else { exit(7) }
                }
                if took.value.load(ordering: .acquiring) != 0 { exit(4) }  // took it while held
                value = 10
            }
            guard MutexBreakTests.wait(until: { took.value.load(ordering: .acquiring) == 1 }) else { exit(5) }
            exit(lock.withLock { $0 } == 11 && lock.word.load(ordering: .relaxed) == 0 ? 0 : 6)
        }
    }

#endif

    /// The error of a body that throws.
    struct BodyFailed: Error, Equatable {}

    /// A value that cannot be copied, made under a lock.
    struct Token: ~Copyable {
        let number: Int
    }

    @Test("a body that throws lets the lock go; a body returns a noncopyable value; two mutexes nest in both orders")
    func throwsNoncopyableAndNesting() {
        let lock = RunLoopKitPlatform.Mutex(0)
        #expect(throws: BodyFailed.self) {
            try lock.withLock { (value: inout Int) throws(BodyFailed) in
                value = 1
                throw BodyFailed()
            }
        }
        #expect(lock.withLockIfAvailable { $0 } == 1)
        #expect(throws: BodyFailed.self) {
            try lock.withLockIfAvailable { (_: inout Int) throws(BodyFailed) -> Int in throw BodyFailed() }
        }
        #expect(lock.withLockIfAvailable { _ in true } == true)
        let token = lock.withLock { value -> Token in
            value += 1
            return Token(number: value)
        }
        #expect(token.number == 2)
        let other = RunLoopKitPlatform.Mutex("")
        lock.withLock { outer in other.withLock { $0 += "a\(outer)" } }
        other.withLock { outer in lock.withLock { $0 += outer.count } }
        #expect(lock.withLockIfAvailable { $0 } == 4)
        #expect(other.withLockIfAvailable { $0 } == "a2")
    }

    @Test("perform() from 8 threads (300,000 blocks each, or 2 s) into a running loop: every block runs exactly once, in each thread's order")
    func performFromEightThreads() async {
        let loop = EVRunLoop.startThread(name: "mutex-break perform")
        let threads = 8
        // Written by the blocks alone, on the loop's thread.
        let next = RunLoopKitPlatform.Mutex((expected: [Int](repeating: 0, count: threads), wrong: 0))
        let sent = RunLoopKitPlatform.Mutex([Int](repeating: 0, count: threads))
        let finished = Counter()
        let end = ContinuousClock.now + .seconds(2)
        for thread in 0..<threads {
            Thread.detachNewThread {
                var index = 0
                while ContinuousClock.now < end && index < 300_000 {
                    let number = index
                    loop.perform {
                        next.withLock { state in
                            if state.expected[thread] != number { state.wrong += 1 }
                            state.expected[thread] = number + 1
                        }
                    }
                    index += 1
                }
                sent.withLock { $0[thread] = index }
                finished.value.add(1, ordering: .releasing)
            }
        }
        let allSent = Self.wait { finished.value.load(ordering: .acquiring) == threads }
        let counts = sent.withLock { $0 }
        let allRan = Self.wait { next.withLock { $0.expected } == counts }
        let state = next.withLock { $0 }
        await loop.shutdown()
        #expect(allSent)
        #expect(allRan, "ran \(state.expected), sent \(counts)")
        #expect(state.wrong == 0)
    }

    @Test("fork() while another thread holds the loop's longest-callout lock (reading metrics): the child's loop names it and fork()")
    func longestCalloutHeldAtFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = currentLoopOfThisThread()
            loop.recordsMetrics = true
            loop.add(EVTimer(interval: 0.001, repeats: false, label: "short") { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(20))
            let gate = HeldLockFork.Gate()
            // A thread reading `loop.metrics` holds this lock while it copies the callout.
            let metrics = loop.metricsStore.load()!
            Thread.detachNewThread { metrics.longest.withLock { _ in gate.hold() } }
            let child = gate.forkWhileHeld(expectingRefusal: ["after fork()", "longest callout"]) {
                // Longer than any callout before: the loop records it as the longest.
                loop.add(EVTimer(interval: 0.001, repeats: false, label: "long") { _ in usleep(100_000) }, forMode: .default)
                loop.run(mode: .default, for: .milliseconds(300))
                _ = loop.metrics
            }
            ForkedScenario.say("child: \(child)")
            ForkedScenario.say("parent reads its metrics: \(loop.metrics.longestCallout != nil)")
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("child: refused\n"), "\(text)")
        #expect(text.contains("parent reads its metrics: true"), "\(text)")
    }
}

/// Forks while another thread adds a paused display link to the loop over and over: each
/// child resumes the link and runs its loop (frames fire). The link's locks are taken by
/// both, so a child finds one copied held now and then.
@Suite("Real time: fork while a display link is changed", .timeLimit(.minutes(5)))
struct FrameTimerForkTests {
    @Test("fork() while another thread adds a paused display link: no child hangs (each runs, or names the lock and fork())")
    func linkChangedAtFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = currentLoopOfThisThread()
            let link = EVFrameTimer(framesPerSecond: 1_000) { _ in }
            loop.add(link, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            let stop = MutexBreakTests.Counter()
            link.isPaused = true
            // While paused, an add records the link's loop and mode and its target, under the
            // link's two locks, and hands the loop nothing.
            Thread.detachNewThread {
                while stop.value.load(ordering: .relaxed) == 0 { loop.add(link, forMode: .default) }
            }
            var (ran, refused, hung) = (0, 0, 0)
            for _ in 0..<20 where hung == 0 {
                let child = fork()
                if child == 0 {
                    link.isPaused = false
                    loop.run(mode: .default, for: .milliseconds(20))
                    _exit(0)
                }
                switch ForkedScenario.waitForChild(child, within: 10) {
                case -1: hung += 1
                case 0: ran += 1
                default: refused += 1
                }
            }
            stop.value.store(1, ordering: .relaxed)
            ForkedScenario.say("children: ran \(ran), refused \(refused), hung \(hung)")
            ForkedScenario.finish(hung == 0)
        }
        let (passed, text) = ForkedScenario.outcome(saying: result?.standardErrorContent)
        #expect(passed, "\(text)")
        // A child that stopped said why: a lock of the link's (or of the loop's) and fork().
        #expect(text.contains("refused 0,") || text.contains("RunLoopKit: after fork()"), "\(text)")
    }
}
