import Dispatch
import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// Uses of signal sources that take nothing from them: the takeover check must let each
/// one run. Each runs in a child process, since dispositions are the whole process's.
@Suite("Real time: signal sources the takeover check lets run", .timeLimit(.minutes(10)))
struct SignalTakeoverEdgeTests {
    /// The standard error an exit test observed, as text.
    /// This thread's loop, from synchronous code (the child of a fork runs on the exit
    /// test's thread).
    static func loopOfThisThread() -> EVRunLoop { EVRunLoop.current }

    /// Waits up to `seconds` for `condition`, waking `loops` meanwhile.
    static func await(_ seconds: Double, _ loops: [LoopThread], _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            for thread in loops { thread.loop.wakeUp() }
            usleep(2_000)
        }
        return true
    }

    @Test("two loops on two threads watching one signal both fire; one invalidated, the other still does")
    func twoLoopsOneSignal() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let first = LoopThread(), second = LoopThread()
            // Atomics, not a Mutex: ThreadSanitizer on Linux does not see Synchronization.Mutex
            // hand the counts from one loop's thread to the other's.
            let firstCount = Atomic<Int>(0), secondCount = Atomic<Int>(0)
            let a = first.onLoop {
                let source = EVSource(signal: SIGUSR1) { _ in firstCount.add(1, ordering: .sequentiallyConsistent) }
                first.loop.add(source, forMode: .default)
                return source
            }
            let b = second.onLoop {
                let source = EVSource(signal: SIGUSR1) { _ in secondCount.add(1, ordering: .sequentiallyConsistent) }
                second.loop.add(source, forMode: .default)
                return source
            }
            kill(getpid(), SIGUSR1)
            guard Self.await(30, [first, second], { firstCount.load(ordering: .sequentiallyConsistent) > 0 && secondCount.load(ordering: .sequentiallyConsistent) > 0 }) else { exit(2) }
            first.onLoop { a.invalidate() }
            kill(getpid(), SIGUSR1)
            guard Self.await(30, [first, second], { secondCount.load(ordering: .sequentiallyConsistent) > 1 }) else { exit(3) }
            for _ in 0..<20 {
                first.loop.wakeUp(); second.loop.wakeUp()
                usleep(10_000)
            }
            withExtendedLifetime(b) { exit(0) }
        }
        #expect(!standardError(result).contains("disposition was changed"), "\(standardError(result))")
    }

    @Test("sources of one signal added and invalidated over and over on two threads at once")
    func churnOnTwoThreads() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let threads = [LoopThread(), LoopThread()]
            let group = DispatchGroup()
            for thread in threads {
                DispatchQueue.global().async(group: group) {
                    for _ in 0..<300 {
                        let source = thread.onLoop {
                            let source = EVSource(signal: SIGUSR2) { _ in }
                            thread.loop.add(source, forMode: .default)
                            return source
                        }
                        thread.loop.wakeUp()
                        // From another thread: the removal is queued to the loop.
                        source.invalidate()
                        thread.loop.wakeUp()
                    }
                }
            }
            guard group.wait(timeout: .now() + 120) == .success else { exit(2) }
            exit(0)
        }
        #expect(!standardError(result).contains("disposition was changed"), "\(standardError(result))")
    }

    @Test("the handler a signal had comes back after the last invalidate; a source added again fires")
    func handlerRestored() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let own: @convention(c) (Int32) -> Void = { _ in }
            signal(SIGUSR1, own)
            let thread = LoopThread()
            let source = thread.onLoop {
                let source = EVSource(signal: SIGUSR1) { _ in }
                thread.loop.add(source, forMode: .default)
                return source
            }
            thread.onLoop { source.invalidate() }
            var now = sigaction()
            sigaction(SIGUSR1, nil, &now)
            guard unsafeBitCast(now.__sigaction_handler.sa_handler, to: Optional<UnsafeRawPointer>.self)
                == unsafeBitCast(own, to: Optional<UnsafeRawPointer>.self) else { exit(2) }
            let fired = Mutex(0)
            let again = thread.onLoop {
                let source = EVSource(signal: SIGUSR1) { _ in fired.withLock { $0 += 1 } }
                thread.loop.add(source, forMode: .default)
                return source
            }
            kill(getpid(), SIGUSR1)
            guard Self.await(30, [thread], { fired.withLock { $0 } > 0 }) else { exit(3) }
            withExtendedLifetime(again) { exit(0) }
        }
        #expect(!standardError(result).contains("disposition was changed"), "\(standardError(result))")
    }

    @Test("a forked child watching the signal its parent's loop watches: added, invalidated, added again")
    func forkedChildReAdds() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let thread = LoopThread()
            let parents = thread.onLoop {
                let source = EVSource(signal: SIGUSR1) { _ in }
                thread.loop.add(source, forMode: .default)
                return source
            }
            let child = fork()
            if child == 0 {
                let loop = Self.loopOfThisThread()
                let fired = Mutex(0)
                for _ in 0..<3 {
                    let source = EVSource(signal: SIGUSR1) { _ in fired.withLock { $0 += 1 } }
                    loop.add(source, forMode: .default)
                    let before = fired.withLock { $0 }
                    kill(getpid(), SIGUSR1)
                    let deadline = Date().addingTimeInterval(30)
                    while fired.withLock({ $0 }) == before {
                        if Date() > deadline { _exit(2) }
                        loop.run(mode: .default, for: .milliseconds(10), returnAfterSourceHandled: true)
                    }
                    source.invalidate()
                    for _ in 0..<5 { loop.run(mode: .default, for: .milliseconds(1)) }
                }
                _exit(0)
            }
            let passed = ForkTests.childPassed(child)
            for _ in 0..<10 {
                thread.loop.wakeUp()
                usleep(10_000)
            }
            withExtendedLifetime(parents) { exit(passed ? 0 : 3) }
        }
        #expect(!standardError(result).contains("disposition was changed"), "\(standardError(result))")
    }

    @Test("Foundation's Process beside a SIGCHLD source: the source sees the child's exit")
    func foundationProcessBesideSIGCHLD() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let thread = LoopThread()
            let fired = Mutex(0)
            let source = thread.onLoop {
                let source = EVSource(signal: SIGCHLD) { _ in fired.withLock { $0 += 1 } }
                thread.loop.add(source, forMode: .default)
                return source
            }
            for _ in 0..<3 {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/true")
                guard (try? process.run()) != nil else { exit(4) }
                process.waitUntilExit()
            }
            guard Self.await(30, [thread], { fired.withLock { $0 } > 0 }) else { exit(2) }
            for _ in 0..<20 {
                thread.loop.wakeUp()
                usleep(10_000)
            }
            withExtendedLifetime(source) { exit(0) }
        }
        #expect(!standardError(result).contains("disposition was changed"), "\(standardError(result))")
    }
}
