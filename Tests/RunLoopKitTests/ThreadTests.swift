import Foundation
import RunLoopKit
import Synchronization
import Testing

@Suite("Threads", .timeLimit(.minutes(10)))
struct ThreadTests {
    @Test("4 threads each performing 10,000 blocks: every block runs exactly once, on the loop's thread",
          arguments: [LoopKind.virtual, .libev])
    func crossThreadPerform(kind: LoopKind) {
        let perThread = 10_000
        let counts = onFreshThread { () -> [Int] in
            let loop = kind == .virtual ? EVRunLoop(clock: EVVirtualClock()) : EVRunLoop.current
            let ran = LoopBox([Int](repeating: 0, count: 4 * perThread))
            let total = LoopBox(0)
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            for t in 0..<4 {
                Thread.detachNewThread {
                    for i in 0..<perThread {
                        loop.perform {
                            ran.value[t * perThread + i] += 1
                            total.value += 1
                            if total.value == 4 * perThread { loop.stop() }
                        }
                    }
                }
            }
            loop.run()
            return ran.value
        }
        #expect(counts.count == 4 * perThread)
        #expect(counts.allSatisfy { $0 == 1 })
    }

    @Test("timers added and invalidated from another thread")
    func crossThreadTimers() {
        let fired = onFreshThread { () -> [String] in
            let loop = EVRunLoop.current
            let log = Recorder()
            // Due long after the other thread's work, however late that thread is scheduled.
            let doomed = EVTimer(interval: 3, repeats: false) { _ in log.append("doomed") }
            loop.add(EVSource { _ in }, forMode: .default)
            loop.add(doomed, forMode: .default)
            Thread.detachNewThread {
                doomed.invalidate()
                loop.add(EVTimer(interval: 0.01, repeats: false) { _ in
                    log.append("added")
                    loop.stop()
                }, forMode: .default)
            }
            loop.run(mode: .default, for: .seconds(10))  // until "added" stops it
            return log.lines
        }
        #expect(fired == ["added"])
    }

    @Test("a timer added to a second mode from another thread, while the loop resolves its first add, fires in that mode")
    func crossThreadSecondAdd() {
        let rounds = 2_000
        let fired = onFreshThread { () -> Int in
            let loop = EVRunLoop.current
            let other = EVRunLoop.Mode("other")
            let count = LoopBox(0)
            loop.add(EVSource { _ in }, forMode: other)  // keeps the running mode alive
            Thread.detachNewThread {
                for _ in 0..<rounds {
                    let timer = EVTimer(interval: 0.001, repeats: false) { _ in
                        count.value += 1
                        if count.value == rounds { loop.stop() }
                    }
                    // The first add is resolved on the loop's thread while this thread adds
                    // again: the second add must not read the schedule being resolved.
                    loop.add(timer, forMode: .default)
                    usleep(100)  // lets the loop take the first add before the second
                    loop.add(timer, forMode: other)
                }
            }
            loop.run(mode: other, for: .seconds(30))
            return count.value
        }
        #expect(fired == rounds)
    }

    @Test("a timer added at the same moment on its loop's thread and from another thread is queued once and fires once")
    func simultaneousAdds() {
        // The other thread's add may be the first claim: it then reads the timer's start
        // while the loop's thread resolves it (a race ThreadSanitizer reported until the two
        // fields became relaxed atomics).
        let rounds = 300
        let fired = onFreshThread { () -> Int in
            let loop = EVRunLoop.current
            let count = LoopBox(0)
            for _ in 0..<rounds {
                let timer = EVTimer(interval: 0.000_1, repeats: false) { _ in count.value += 1 }
                let started = DispatchSemaphore(value: 0)
                let added = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    started.signal()
                    loop.add(timer, forMode: .default)
                    added.signal()
                }
                started.wait()
                loop.add(timer, forMode: .default)
                added.wait()
                loop.run(mode: .default, for: .seconds(1))  // until the mode is empty
            }
            return count.value
        }
        #expect(fired == rounds)
    }

    @Test("current is one loop per thread; main is the main thread's")
    func currentPerThread() {
        let a = onFreshThread { EVRunLoop.current }
        let b = onFreshThread { EVRunLoop.current }
        let here = EVRunLoop.current
        #expect(here === EVRunLoop.current)
        #expect(a !== b)
        #expect(a !== EVRunLoop.main)
        #expect(Thread.isMainThread == (here === EVRunLoop.main))
    }

    @Test("inside a callout, current is the loop running it")
    func currentInsideCallout() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let same = LoopBox(false)
        loop.add(EVTimer(interval: 1, repeats: false) { _ in same.value = EVRunLoop.current === loop },
                 forMode: .default)
        loop.run(mode: .default, for: .seconds(2))
        #expect(same.value)
        #expect(EVRunLoop.current !== loop)
    }
}
