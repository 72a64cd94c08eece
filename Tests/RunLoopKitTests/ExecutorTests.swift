import Foundation
import RunLoopKit
import Synchronization
import Testing

/// An actor whose executor is a loop: its methods, and the loop's callouts, share its state.
actor Ticker {
    let loop: EVRunLoop
    private(set) var ticks = 0
    private(set) var tickThreads: Set<pthread_t> = []

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(loop: EVRunLoop) { self.loop = loop }

    /// Adds a timer whose callout counts ticks in the actor's state.
    func start() {
        let timer = EVTimer(interval: 0.005, repeats: true, label: "tick", block: EVRunLoop.isolated { _ in
            self.ticks += 1
            self.tickThreads.insert(pthread_self())
        })
        loop.add(timer, forMode: .default)
    }

    func thread() -> pthread_t { pthread_self() }

    /// A callout that uses the actor's state.
    func makeCallout() -> @Sendable () -> Void { EVRunLoop.isolated { self.ticks += 1 } }
}

@Suite("Executors", .timeLimit(.minutes(10)))
struct ExecutorTests {
    @Test("an actor pinned to a loop runs on the loop's thread and reads what its timer callouts wrote")
    func pinnedActor() async throws {
        let owner = LoopThread()
        defer { owner.stop() }
        let ticker = Ticker(loop: owner.loop)
        await ticker.start()
        #expect(await ticker.thread() == owner.thread)
        let deadline = ContinuousClock.now + .seconds(20)
        while await ticker.ticks < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(await ticker.ticks >= 3)
        #expect(await ticker.tickThreads == [owner.thread])
    }

    @Test("Task(executorPreference:) runs nonisolated async code on the loop's thread")
    func taskPreference() async {
        let owner = LoopThread()
        defer { owner.stop() }
        let threads = await Task(executorPreference: owner.loop) { () async -> [pthread_t] in
            let first = pthread_self()
            await Task.yield()
            return [first, pthread_self()]
        }.value
        #expect(threads == [owner.thread, owner.thread])
    }

    @Test("jobs run after the blocks of a common mode and show in the trace; a waiting job keeps the mode from being empty")
    func jobsInThePass() {
        let lines = onFreshThread { () -> [String] in
            let loop = EVRunLoop(clock: EVVirtualClock())
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            loop.perform(label: "b") {}
            Task(executorPreference: loop) {}
            loop.run(mode: .default, for: .seconds(1))
            return trace.lines
        }
        #expect(lines == [
            "entry", "beforeTimers", "beforeSources", "block(b)", "job", "beforeWaiting", "afterWaiting",
            "exit", "return(timedOut)",
        ])
    }

    @Test("jobs wait while the loop runs a mode that is not common")
    func jobsOnlyInCommonModes() {
        let lines = onFreshThread { () -> [String] in
            let loop = EVRunLoop(clock: EVVirtualClock())
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            loop.add(EVTimer(interval: 1, repeats: false, label: "t") { _ in }, forMode: EVRunLoop.Mode("private"))
            Task(executorPreference: loop) {}
            loop.run(mode: EVRunLoop.Mode("private"), for: .seconds(5))
            loop.run(mode: .default, for: .seconds(5))
            return trace.lines
        }
        #expect(lines == [
            "entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "timer(t)",
            "exit", "return(finished)",
            "entry", "beforeTimers", "beforeSources", "job", "beforeWaiting", "afterWaiting",
            "exit", "return(timedOut)",
        ])
    }

    @Test("jobs run in a mode made common after the loop first ran it")
    func jobsInAModeMadeCommon() {
        let lines = onFreshThread { () -> [String] in
            let loop = EVRunLoop(clock: EVVirtualClock())
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            let mode = EVRunLoop.Mode("later common")
            loop.add(EVTimer(interval: 1, repeats: false, label: "t") { _ in }, forMode: mode)
            Task(executorPreference: loop) {}
            loop.run(mode: mode, for: .seconds(5))
            loop.addCommonMode(mode)
            loop.add(EVTimer(interval: 1, repeats: false, label: "u") { _ in }, forMode: mode)
            loop.run(mode: mode, for: .seconds(5))
            return trace.lines
        }
        #expect(lines == [
            "entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "timer(t)",
            "exit", "return(finished)",
            "entry", "beforeTimers", "beforeSources", "job", "beforeWaiting", "afterWaiting", "timer(u)",
            "exit", "return(finished)",
        ])
    }

    @Test("a callout made isolated to an actor stops the program when called outside it")
    func isolatedCalloutOffActor() async {
        await #expect(processExitsWith: .failure) {
            let owner = LoopThread()
            let callout = await Ticker(loop: owner.loop).makeCallout()
            callout()  // here, not on the loop's thread
        }
    }

    @Test("a callout made by nonisolated code stops the program when called on another thread")
    func isolatedCalloutOffThread() async {
        await #expect(processExitsWith: .failure) {
            let callout = EVRunLoop.isolated {}
            let returned = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                callout()
                returned.signal()
            }
            // The other thread stops the process; a callout that returned instead ends the test.
            _ = returned.wait(timeout: .now() + 60)
        }
    }

    @Test("a callout made by nonisolated code runs on the thread that made it")
    func isolatedCalloutOnItsThread() {
        let ran = onFreshThread { () -> Int in
            let loop = EVRunLoop(clock: EVVirtualClock())
            var count = 0  // not Sendable-captured: the callout stays on this thread
            loop.add(EVTimer(interval: 1, repeats: false, block: EVRunLoop.isolated { _ in count += 1 }),
                     forMode: .default)
            loop.perform(EVRunLoop.isolated { count += 10 })
            loop.run(mode: .default, for: .seconds(5))
            return count
        }
        #expect(ran == 11)
    }

    @Test("checkIsolated() off the loop's thread stops the program")
    func checkIsolatedOffThread() async {
        await #expect(processExitsWith: .failure) {
            EVRunLoop(clock: EVVirtualClock()).checkIsolated()
            let loop = EVRunLoop.main
            loop.checkIsolated()  // the exit test's body runs off the main thread
        }
    }
}
