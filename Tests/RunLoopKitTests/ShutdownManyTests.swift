import Foundation
import RunLoopKit
import Synchronization
import Testing

/// Many loops on threads of their own, started and shut down at once.
@Suite("Real time: many loops shut down at once", .timeLimit(.minutes(10)))
struct ShutdownManyTests {
    @Test("rounds of loops started and shut down from many tasks at once all return; each thread ends")
    func manyAtOnce() async {
        let returned = await returnsWithin(.seconds(240)) {
            for _ in 0..<4 {
                await withTaskGroup(of: Void.self) { group in
                    for index in 0..<48 {
                        group.addTask {
                            let loop = EVRunLoop.startThread(name: "many-\(index)")
                            let timer = EVTimer(interval: .milliseconds(1), repeats: true) { _ in }
                            loop.add(timer, forMode: .default)
                            // Twice at once, one synchronous from a thread of its own.
                            async let first: Void = loop.shutdown()
                            let ended = DispatchSemaphore(value: 0)
                            Thread.detachNewThread {
                                loop.syncShutdown()
                                ended.signal()
                            }
                            await first
                            _ = await signalled(ended, within: .seconds(120))
                        }
                    }
                }
            }
        }
        #expect(returned)
    }

    @Test("a shutdown asked for from a callout of the loop, through a task, returns")
    func fromACallout() async {
        let loop = EVRunLoop.startThread(name: "callout")
        let done = DispatchSemaphore(value: 0)
        loop.perform {
            Task.detached {
                await loop.shutdown()
                done.signal()
            }
            // The callout is still running when the shutdown comes.
            usleep(100_000)
        }
        #expect(await signalled(done, within: .seconds(60)))
    }
}
