import Foundation
import Glibc
import RunLoopKit
import Testing

/// One POSIX signal watched by sources on several loops (issue 27): each runs in a child
/// process, since the signals go to the whole process (and, before signals reached every
/// loop, the second loop's add stopped the program). The counts are atomics: ThreadSanitizer
/// does not see `Synchronization.Mutex` hand its lock over, and reported a count taken under
/// one as raced.
@Suite("Real time: signals on several loops", .timeLimit(.minutes(10)))
struct SignalFanOutTests {
    @Test("a burst of a signal reaches every loop with a source for it, at least once each")
    func burstReachesEveryLoop() async {
        await #expect(processExitsWith: .success) {
            let loops = [LoopThread(), LoopThread(), LoopThread()]
            let counts = [Counter(), Counter(), Counter()]
            let sources = loops.indices.map { index in
                loops[index].onLoop {
                    let source = EVSource(signal: SIGUSR2) { _ in counts[index].add() }
                    loops[index].loop.add(source, forMode: .default)
                    return source
                }
            }
            for _ in 0..<20 { kill(getpid(), SIGUSR2) }
            let deadline = ContinuousClock.now + .seconds(20)
            while counts.contains(where: { $0.value == 0 }), ContinuousClock.now < deadline { usleep(1_000) }
            let seen = counts.map(\.value)
            for (index, source) in sources.enumerated() { loops[index].onLoop { source.invalidate() } }
            for loop in loops { loop.stop() }
            print("callouts per loop:", seen)
            exit(seen.allSatisfy { $0 >= 1 && $0 <= 20 } ? 0 : 1)
        }
    }

    @Test("the disposition before the first source, in any loop, comes back after the last")
    func dispositionAcrossLoops() async {
        await #expect(processExitsWith: .success) {
            func ignored() -> Bool {
                var now = sigaction()
                sigaction(SIGWINCH, nil, &now)
                return unsafeBitCast(now.__sigaction_handler.sa_handler, to: Int.self)
                    == unsafeBitCast(SIG_IGN, to: Int.self)
            }
            signal(SIGWINCH, SIG_IGN)
            let first = LoopThread(), second = LoopThread()
            let fired = Counter()
            func watch(on thread: LoopThread) -> EVSource {
                thread.onLoop {
                    let source = EVSource(signal: SIGWINCH) { _ in fired.add() }
                    thread.loop.add(source, forMode: .default)
                    return source
                }
            }
            let a = watch(on: first), b = watch(on: second)
            let caughtWithBoth = !ignored()
            first.onLoop { a.invalidate() }
            let caughtWithOne = !ignored()
            // The second loop still gets the signal after the first let go.
            kill(getpid(), SIGWINCH)
            let deadline = ContinuousClock.now + .seconds(20)
            while fired.value == 0, ContinuousClock.now < deadline { usleep(1_000) }
            second.onLoop { b.invalidate() }
            let ignoredAgain = ignored()
            first.stop()
            second.stop()
            exit(caughtWithBoth && caughtWithOne && fired.value == 1 && ignoredAgain ? 0 : 1)
        }
    }
}
