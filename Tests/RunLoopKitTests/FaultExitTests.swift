import Foundation
import Glibc
import RunLoopKit
import Testing

/// Faults that used to stop the process, or must stop it with a message: each runs in a
/// child process and checks its exit and its standard error.
@Suite("Fault exits", .timeLimit(.minutes(10)))
struct FaultExitTests {
    @Test("adding one timer or source to two loops stops with a message at the second add")
    func twoLoops() async {
        let timer = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let first = onFreshThread { EVRunLoop(clock: EVVirtualClock()) }
            let second = onFreshThread { EVRunLoop(clock: EVVirtualClock()) }
            let timer = EVTimer(interval: 1, repeats: false, label: "shared") { _ in }
            first.add(timer, forMode: .default)
            second.add(timer, forMode: .default)
        }
        #expect(standardError(timer).contains("EVRunLoop.add(_:forMode:): timer shared belongs to another loop"))
        let source = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let first = onFreshThread { EVRunLoop(clock: EVVirtualClock()) }
            let second = onFreshThread { EVRunLoop(clock: EVVirtualClock()) }
            let source = EVSource(label: "shared") { _ in }
            first.add(source, forMode: .default)
            second.add(source, forMode: .default)
        }
        #expect(standardError(source).contains("EVRunLoop.add(_:forMode:): source shared belongs to another loop"))
    }

    @Test("a descriptor closed while its mode was not running: re-arming reports the error, no libev abort")
    func closedDescriptorRearmed() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { exit(3) }
            let calls = LoopBox(0)
            let source = try? EVSource(fileDescriptor: fds[0]) { _ in calls.value += 1 }
            loop.add(source!, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: "other")
            loop.run(mode: .default, for: .milliseconds(10))
            close(fds[0])
            close(fds[1])
            loop.run(mode: "other", for: .milliseconds(10))
            loop.run(mode: .default, for: .milliseconds(10))
            loop.run(mode: .default, for: .milliseconds(10))
            exit(calls.value == 1 && !source!.isValid ? 0 : 2)
        }
    }

    @Test("a new thread that reuses a dead owner's pthread_t cannot run its loop")
    func reusedThreadIdentity() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (loop, owner) = onJoinedThread { () -> (EVRunLoop, UInt) in
                let loop = EVRunLoop(clock: EVVirtualClock())
                loop.add(EVTimer(interval: 1, repeats: false) { _ in }, forMode: .default)
                return (loop, pthread_self())
            }
            for _ in 0..<1_000 {
                onJoinedThread {
                    let me = pthread_self()
                    guard me == owner else { return }
                    loop.run(mode: .default, for: .seconds(2))
                    exit(0)  // ran another thread's loop without a word
                }
            }
            FileHandle.standardError.write(Data("no thread reused the pthread_t\n".utf8))
            exit(0)
        }
        #expect(standardError(result).contains("EVRunLoop.run(mode:for:returnAfterSourceHandled:) called off the loop's thread"))
    }

    @Test("a nonisolated callout run by a new thread that reuses its maker's pthread_t stops")
    func isolatedCalloutOnReusedThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (callout, maker) = onJoinedThread { () -> (@Sendable () -> Void, UInt) in
                (EVRunLoop.isolated {}, pthread_self())
            }
            for _ in 0..<1_000 {
                onJoinedThread {
                    guard pthread_self() == maker else { return }
                    callout()
                    exit(0)  // ran on a thread that is not its maker's without a word
                }
            }
            FileHandle.standardError.write(Data("no thread reused the pthread_t\n".utf8))
            exit(0)
        }
        #expect(standardError(result).contains("EVRunLoop.isolated: a callout made by nonisolated code on one thread ran on another"))
    }
}
