import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// `EVRunLoop.startThread(name:)` and its shutdown. (`loop-thread-probe`, run by
/// `LoopThreadTests`, counts threads and descriptors over 1,000 start/shutdown cycles in a
/// process of its own, where no other test's threads blur the count.)
@Suite("A loop on a thread of its own", .timeLimit(.minutes(10)))
struct StartThreadTests {
    /// The calling thread's kernel name (`/proc/thread-self/comm`).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .newlines)
    }

    /// Runs `body` on `loop` and waits for its result.
    static func onLoop<T: Sendable>(_ loop: EVRunLoop, _ body: @escaping @Sendable () -> T) async -> T {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.perform(inModes: [.common]) {
            result.withLock { $0 = body() }
            done.signal()
        }
        _ = await signalled(done, within: .seconds(60))
        return result.withLock { $0! }
    }

    @Test("the loop runs on a named thread of its own, its timers and blocks there")
    func runsOnItsThread() async {
        let loop = EVRunLoop.startThread(name: "a-name-longer-than-15-bytes")
        let (name, current, isLoopThread) = await Self.onLoop(loop) {
            (Self.threadName(), EVRunLoop.current === loop, loop.isIsolatingCurrentContext() == true)
        }
        #expect(name == "a-name-longer-t")
        #expect(current)
        #expect(isLoopThread)
        #expect(loop.isIsolatingCurrentContext() == false)

        let fired = Atomic<Int>(0)
        let onLoopThread = Atomic<Bool>(true)
        let timer = EVTimer(interval: 0.01, repeats: true, tolerance: 0.005) { _ in
            if loop.isIsolatingCurrentContext() != true { onLoopThread.store(false, ordering: .relaxed) }
            fired.add(1, ordering: .relaxed)
        }
        loop.add(timer, forMode: .common)
        try? await loop.clock.sleep(for: .milliseconds(100))
        timer.invalidate()
        let (fires, allOnLoopThread) = (fired.load(ordering: .relaxed), onLoopThread.load(ordering: .relaxed))
        #expect(fires >= 3)
        #expect(allOnLoopThread)
        await loop.shutdown()
    }

    @Test("an empty loop keeps running until it is shut down")
    func keptRunningWhileEmpty() async {
        let loop = EVRunLoop.startThread(name: "empty")
        try? await Task.sleep(for: .milliseconds(50))  // a run that finished would have ended the thread
        let mode = await Self.onLoop(loop) { loop.currentMode }
        #expect(mode == .default)
        await loop.shutdown()
    }

    @Test("after shutdown, nothing the loop held is left: weak references to all of it are nil")
    func nothingLeaks() async {
        weak var weakLoop: EVRunLoop?
        weak var weakTimer: EVTimer?
        weak var weakSource: EVSource?
        weak var weakObserver: EVObserver?
        do {
            let loop = EVRunLoop.startThread(name: "leaks")
            // Each captures the loop: kept, any of them would keep the loop, and its descriptors.
            let timer = EVTimer(interval: 100, repeats: true) { _ in loop.wakeUp() }
            let source = EVSource { _ in loop.wakeUp() }
            let observer = LoopBox<EVObserver?>(nil)  // observers are added on the loop's thread
            await Self.onLoop(loop) {
                observer.value = EVObserver(activities: .beforeWaiting) { _, _ in loop.wakeUp() }
                loop.add(observer.value!, forMode: .common)
            }
            loop.add(timer, forMode: .common)
            loop.add(source, forMode: .common)
            loop.perform(inModes: [EVRunLoop.Mode("never run")]) { loop.wakeUp() }
            (weakLoop, weakTimer, weakSource, weakObserver) = (loop, timer, source, observer.value)
            observer.value = nil
            await loop.shutdown()
        }
        #expect(weakLoop == nil)
        #expect(weakTimer == nil)
        #expect(weakSource == nil)
        #expect(weakObserver == nil)
    }

    @Test("shutting down twice, and from two tasks at once, returns once the thread ended")
    func shutdownTwice() async {
        let loop = EVRunLoop.startThread(name: "twice")
        async let first: Void = loop.shutdown()
        async let second: Void = loop.shutdown()
        _ = await (first, second)
        loop.syncShutdown()
        await loop.shutdown()
        // The thread is gone: work handed to the loop now is dropped, not run.
        let ran = Atomic<Bool>(false)
        loop.perform { ran.store(true, ordering: .relaxed) }
        try? await Task.sleep(for: .milliseconds(20))
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test("syncShutdown joins the thread")
    func syncShutdown() async {
        let loop = EVRunLoop.startThread(name: "sync")
        let tid = await Self.onLoop(loop) {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?
                .split(separator: "/").last.map(String.init) ?? "?"
        }
        #expect(FileManager.default.fileExists(atPath: "/proc/self/task/\(tid)"))
        loop.syncShutdown()
        #expect(!FileManager.default.fileExists(atPath: "/proc/self/task/\(tid)"))
    }

    @Test("shutting down a loop startThread did not make stops with a message")
    func notHosted() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            currentLoopOfThisThread().syncShutdown()
        }
        #expect(standardError(result).contains("EVRunLoop.syncShutdown(): this loop was not made by EVRunLoop.startThread(name:)"))
    }

    @Test("shutting down from the loop's own thread stops with a message")
    func fromItsOwnThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = EVRunLoop.startThread(name: "self")
            loop.perform { loop.syncShutdown() }
            // The loop's thread stops the process; a shutdown that returned instead ends the test.
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 60)
        }
        #expect(standardError(result).contains("EVRunLoop.syncShutdown() called on the loop's own thread"))
    }
}

/// Issue 35, item 1: a shutdown reaches every run on the loop's thread, not the innermost
/// only (GLib's `g_main_loop_quit` marks the loop, and the outer `g_main_loop_run` checks its
/// own flag after every iteration; libuv's `uv_stop` likewise).
@Suite("Real time: shutting down a loop in a nested run", .timeLimit(.minutes(10)))
struct ShutdownNestedRunTests {
    /// Where the loop's thread is when the shutdown comes.
    enum Nesting: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// In a run of the default mode (a common mode) nested in a block.
        case commonMode = "nested run of a common mode"
        /// In a run of a private mode nested in a block.
        case privateMode = "nested run of a private mode"
        var testDescription: String { rawValue }
    }

    /// How the shutdown is asked for.
    enum Call: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case async = "shutdown()"
        case sync = "syncShutdown()"
        var testDescription: String { rawValue }
    }

    @Test("the shutdown ends the nested run and the thread's own run, and the thread ends",
          arguments: Nesting.allCases, Call.allCases)
    func endsEveryRun(nesting: Nesting, call: Call) async {
        let loop = EVRunLoop.startThread(name: "nested")
        let asleep = DispatchSemaphore(value: 0)
        let results = Mutex<[EVRunLoop.RunResult]>([])
        loop.perform(inModes: [.common], label: "nests") {
            let mode: EVRunLoop.Mode = nesting == .commonMode ? .default : "private"
            let keepAlive = EVTimer(interval: 3_600, repeats: false) { _ in }
            loop.add(keepAlive, forMode: mode)
            let sleeping = EVObserver(activities: .beforeWaiting, repeats: false) { _, _ in asleep.signal() }
            loop.add(sleeping, forMode: mode)
            let result = loop.run(mode: mode, until: .distantFuture)
            // A run started after the shutdown ends at once too.
            let again = loop.run(mode: mode, until: .distantFuture)
            keepAlive.invalidate()
            results.withLock { $0 += [result, again] }
        }
        #expect(await signalled(asleep, within: .seconds(10)))
        switch call {
        case .async:
            let returned = await returnsWithin(.seconds(30)) { await loop.shutdown() }
            #expect(returned, "shutdown() did not return within 30 s with the loop in a \(nesting.rawValue)")
        case .sync:
            let ended = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                loop.syncShutdown()
                ended.signal()
            }
            let joined = await signalled(ended, within: .seconds(10))
            #expect(joined, "syncShutdown() did not return within 10 s with the loop in a \(nesting.rawValue)")
        }
        #expect(results.withLock { $0 } == [.stopped, .stopped])
    }
}
