import Foundation
import Glibc
import RunLoopKitPlatform
import RunLoopKitTestSupport
import Synchronization
import Testing

/// The platform's mutex, every RunLoopKit module's `Mutex` (a futex word of 0 free, 1 held,
/// 2 waited for, with no thread id in it): threads that contend all get it, a try while it
/// is held answers nil, and in a forked child the threads made there take it from the
/// forking thread, while a copy held at the fork by another thread of the parent stays busy.
@Suite("Real time: the platform's mutex", .timeLimit(.minutes(5)))
struct PlatformMutexTests {
    /// A count shared with other threads.
    typealias Counter = ForkHeldLockTests.Counter

    /// Waits until `done` or 10 s pass; whether `done`.
    static func wait(until done: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline { usleep(1_000) }
        return done()
    }

    @Test("threads contend for the mutex: every increment is counted, and no two bodies overlap")
    func contention() {
        let lock = RunLoopKitPlatform.Mutex((count: 0, inside: false, overlaps: 0))
        let finished = Counter()
        let threads = 4
        let increments = 20_000
        for _ in 0..<threads {
            Thread.detachNewThread {
                for _ in 0..<increments {
                    lock.withLock { state in
                        if state.inside { state.overlaps += 1 }
                        state.inside = true
                        state.count += 1
                        state.inside = false
                    }
                }
                finished.value.add(1, ordering: .releasing)
            }
        }
        #expect(Self.wait { finished.value.load(ordering: .acquiring) == threads })
        let state = lock.withLock { $0 }
        #expect(state.count == threads * increments)
        #expect(state.overlaps == 0)
    }

    @Test("withLockIfAvailable: nil without running the body while another thread holds the lock; runs it once the lock is free")
    func tryWhileHeld() {
        let lock = RunLoopKitPlatform.Mutex(0)
        let tried = Counter()
        let answers = RunLoopKitPlatform.Mutex<[Int?]>([])
        /// Tries the lock on another thread, recording its answer; whether the try ended.
        func tryOnAnotherThread(_ attempt: Int) -> Bool {
            Thread.detachNewThread {
                let answer = lock.withLockIfAvailable { $0 }
                answers.withLock { $0.append(answer) }
                tried.value.store(attempt, ordering: .releasing)
            }
            return Self.wait { tried.value.load(ordering: .acquiring) == attempt }
        }
        lock.withLock { value in
            value = 1
            #expect(tryOnAnotherThread(1))
            value = 2
        }
        #expect(tryOnAnotherThread(2))
        #expect(answers.withLock { $0 } == [nil, 2])
    }

    @Test("fork(): threads made in the child take the mutex from the forking thread; a copy another parent thread held stays busy")
    func forkedChild() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let lock = RunLoopKitPlatform.Mutex(0)
            lock.withLock { $0 += 1 }  // taken by the forking thread before the fork
            let heldAtFork = RunLoopKitPlatform.Mutex(0)
            let holding = PlatformMutexTests.Counter()
            let release = PlatformMutexTests.Counter()
            Thread.detachNewThread {
                heldAtFork.withLock { _ in
                    holding.value.store(1, ordering: .releasing)
                    while release.value.load(ordering: .acquiring) == 0 { usleep(1_000) }
                }
            }
            guard PlatformMutexTests.wait(until: { holding.value.load(ordering: .acquiring) == 1 }) else {
                ForkedScenario.say("the other thread never held the lock")
                ForkedScenario.finish(false)
            }
            let child = fork()
            if child == 0 {
                let threads = 4
                let increments = 2_000
                let finished = PlatformMutexTests.Counter()
                lock.withLock { _ in
                    for _ in 0..<threads {
                        Thread.detachNewThread {
                            for _ in 0..<increments { lock.withLock { $0 += 1 } }
                            finished.value.add(1, ordering: .releasing)
                        }
                    }
                    usleep(50_000)  // the child's threads wait for the forking thread
                }
                for _ in 0..<increments { lock.withLock { $0 += 1 } }
                let done = PlatformMutexTests.wait { finished.value.load(ordering: .acquiring) == threads }
                let count = lock.withLock { $0 }
                let busy = heldAtFork.withLockIfAvailable { _ in true } == nil
                ForkedScenario.say("child: threads done \(done), count \(count) of \(1 + (threads + 1) * increments), copy held at the fork busy \(busy)")
                _exit(done && count == 1 + (threads + 1) * increments && busy ? 0 : 1)
            }
            release.value.store(1, ordering: .releasing)
            let parentTakes = PlatformMutexTests.wait { heldAtFork.withLockIfAvailable { _ in true } != nil }
            ForkedScenario.say("parent: the lock its thread held is free again \(parentTakes)")
            let status = ForkedScenario.reapChild(child)
            ForkedScenario.finish(status == 0 && parentTakes)
        }
        let (passed, text) = ForkedScenario.outcome(saying: result?.standardErrorContent)
        #expect(passed, "\(text)")
    }
}
