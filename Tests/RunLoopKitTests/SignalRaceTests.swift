internal import CRunLoopKitLibev
import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// Arrivals of `SIGUSR1` at the disposition the test installs before the first source.
private let arrivalsBefore = Atomic<Int>(0)

/// Races of a signal's arrival with the code that hands it out (issue 35, items 11 and 13).
/// Each runs in a child process: the signals go to the whole process, and a deadlocked
/// grandchild must not hang the runner.
@Suite("Real time: signal races", .timeLimit(.minutes(10)))
struct SignalRaceTests {
    /// Busy-waits `nanos` on the monotonic clock.
    static func spin(_ nanos: Int64) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let end = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) + nanos
        repeat { clock_gettime(CLOCK_MONOTONIC, &now) } while Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) < end
    }

    @Test("a signal that arrives while its first source is added reaches the old disposition or the source")
    func signalDuringFirstAdd() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            signal(SIGUSR1) { _ in arrivalsBefore.add(1, ordering: .relaxed) }
            _ = clibev_unblock_signal(SIGUSR1)
            let loop = currentLoopOfThisThread()
            let loopThread = pthread_self()
            // 0: idle, 1: the loop thread is about to add (the sender fires after a random
            // delay), 2: sent.
            let phase = Atomic<Int>(0)
            let delay = Atomic<Int64>(0)
            Thread.detachNewThread {
                while true {
                    while phase.load(ordering: .acquiring) != 1 {}
                    SignalRaceTests.spin(delay.load(ordering: .relaxed))
                    pthread_kill(loopThread, SIGUSR1)
                    phase.store(2, ordering: .releasing)
                }
            }
            var generator = SystemRandomNumberGenerator()
            var lost = 0, before = 0, bySource = 0, cycles = 0
            let end = ContinuousClock.now + .seconds(20)
            while cycles < 4_000, lost < 3, ContinuousClock.now < end {
                cycles += 1
                let seenBefore = arrivalsBefore.load(ordering: .relaxed)
                let fired = LoopBox(false)
                let source = EVSource(signal: SIGUSR1) { _ in fired.value = true }
                delay.store(Int64.random(in: 0..<30_000, using: &generator), ordering: .relaxed)
                phase.store(1, ordering: .releasing)
                loop.add(source, forMode: .default)
                while phase.load(ordering: .acquiring) != 2 {}
                phase.store(0, ordering: .relaxed)
                _ = getpid()  // a system call: a signal pending for this thread is taken now
                if arrivalsBefore.load(ordering: .relaxed) != seenBefore {
                    before += 1
                } else {
                    loop.run(mode: .default, for: .milliseconds(500), returnAfterSourceHandled: true)
                    if fired.value { bySource += 1 } else { lost += 1 }
                }
                source.invalidate()
            }
            FileHandle.standardError.write(Data(
                "\(lost == 0 ? "PASS" : "FAIL"): \(lost) of \(cycles) signals lost (\(before) to the old disposition, \(bySource) to the source)\n".utf8))
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }

    @Test("a fork() while another thread is inside the signal handler leaves the child's receivers usable")
    func forkDuringFanOut() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // Two receivers: the handler reads both slots for every arrival.
            let wakes = (clibev_eventfd_create(), clibev_eventfd_create())
            guard let first = clibev_signal_receiver_new(wakes.0), let second = clibev_signal_receiver_new(wakes.1) else { exit(4) }
            clibev_signal_receiver_want(first, SIGUSR2, 1)
            clibev_signal_receiver_want(second, SIGUSR2, 1)
            guard clibev_signal_catch(SIGUSR2, nil) == 0 else { exit(5) }
            // This thread takes no SIGUSR2; another raises it at itself without a pause, so
            // that it is inside the handler much of the time.
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGUSR2)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            Thread.detachNewThread {
                _ = clibev_unblock_signal(SIGUSR2)
                while true { raise(SIGUSR2) }
            }
            usleep(50_000)
            var stuck = 0
            var forks = 0
            while forks < 200, stuck < 3 {
                forks += 1
                let child = fork()
                if child == 0 {
                    // Frees a receiver (waits for the handlers reading its slot) and makes
                    // one (under the registry's lock).
                    clibev_signal_receiver_free(second)
                    guard let again = clibev_signal_receiver_new(wakes.1) else { _exit(6) }
                    clibev_signal_receiver_free(again)
                    _exit(0)
                }
                var status: Int32 = 0
                var exited = false
                for _ in 0..<200 {
                    if waitpid(child, &status, WNOHANG) == child { exited = true; break }
                    usleep(10_000)
                }
                if !exited {
                    kill(child, SIGKILL)
                    waitpid(child, &status, 0)
                    stuck += 1
                } else if status != 0 {
                    stuck += 1
                }
            }
            FileHandle.standardError.write(Data("\(stuck == 0 ? "PASS" : "FAIL"): \(stuck) of \(forks) children stuck\n".utf8))
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }

    @Test("a fork() while another thread adds and removes signal sources leaves the child able to add one")
    func forkDuringAdds() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            signal(SIGUSR1, SIG_IGN)
            signal(SIGUSR2, SIG_IGN)
            // Another thread adds and removes a signal source without a pause: it holds the
            // lock of the signal claims much of the time.
            Thread.detachNewThread {
                let loop = currentLoopOfThisThread()
                while true {
                    let source = EVSource(signal: SIGUSR1) { _ in }
                    loop.add(source, forMode: .default)
                    source.invalidate()
                }
            }
            usleep(50_000)
            var stuck = 0, forks = 0
            while forks < 200, stuck < 3 {
                forks += 1
                let child = fork()
                if child == 0 {
                    let loop = currentLoopOfThisThread()
                    let source = EVSource(signal: SIGUSR2) { _ in }
                    loop.add(source, forMode: .default)
                    source.invalidate()
                    _exit(0)
                }
                var status: Int32 = 0
                var exited = false
                for _ in 0..<200 {
                    if waitpid(child, &status, WNOHANG) == child { exited = true; break }
                    usleep(10_000)
                }
                if !exited {
                    kill(child, SIGKILL)
                    waitpid(child, &status, 0)
                    stuck += 1
                } else if status != 0 {
                    stuck += 1
                }
            }
            FileHandle.standardError.write(Data("\(stuck == 0 ? "PASS" : "FAIL"): \(stuck) of \(forks) children stuck\n".utf8))
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }
}
