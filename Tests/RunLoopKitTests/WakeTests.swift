import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// The libev backend's wake: an eventfd of its own, read before the sleep after the one it
/// ended rather than before the wake's work runs.
@Suite("Real time: wakes of a libev loop", .timeLimit(.minutes(10)))
struct WakeTests {
    @Test("wakes from another thread each run their block, and the loop then sleeps: little CPU while it waits")
    func sleepsAfterWakes() {
        let (ran, idleCPU) = onFreshThread { () -> (Int, Duration) in
            let loop = EVRunLoop.current
            let source = EVSource(label: "keeps the mode alive") { _ in }
            loop.add(source, forMode: .default)
            let ran = Atomic<Int>(0)
            let waker = Thread {
                for sent in 1...20 {
                    loop.perform { ran.add(1, ordering: .releasing) }
                    while ran.load(ordering: .acquiring) < sent { usleep(200) }
                }
            }
            waker.start()
            while ran.load(ordering: .acquiring) < 20 { loop.run(mode: .default, for: .milliseconds(100)) }
            // The eventfd the last wake wrote must be read before this sleep: unread, it
            // would end every `epoll_wait` at once, and the loop would spin for 300 ms.
            let before = Self.threadCPU()
            loop.run(mode: .default, for: .milliseconds(300))
            let idle = Self.threadCPU() - before
            source.invalidate()
            return (ran.load(ordering: .acquiring), idle)
        }
        #expect(ran == 20)
        #expect(idleCPU < .milliseconds(50))
    }

    @Test("a wake sent from another thread while the loop runs its pass ends the coming wait at once")
    func wakeDuringAPass() {
        let waited = onFreshThread { () -> Duration in
            let loop = EVRunLoop.current
            let source = EVSource(label: "keeps the mode alive") { _ in }
            loop.add(source, forMode: .default)
            let clock = ContinuousClock()
            let asleep = LoopBox(clock.now)
            let waited = LoopBox(Duration.zero)
            let before = EVObserver(activities: .beforeWaiting, repeats: false) { _, _ in
                let waker = Thread { loop.wakeUp() }
                waker.start()
                while !waker.isFinished { usleep(100) }
                asleep.value = clock.now
            }
            let after = EVObserver(activities: .afterWaiting, repeats: false) { _, _ in
                waited.value = clock.now - asleep.value
                loop.stop()
            }
            loop.add(before, forMode: .default)
            loop.add(after, forMode: .default)
            loop.run(mode: .default, for: .seconds(10))
            source.invalidate()
            return waited.value
        }
        #expect(waited < .seconds(5))
    }

    /// CPU time of the calling thread.
    static func threadCPU() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
}
