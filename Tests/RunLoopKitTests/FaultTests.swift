import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// Faults found under stress and bad input (issue 10, points 6–13), each checked in the
/// test process. The ones that stop the process are in `FaultExitTests`.
@Suite("Faults", .timeLimit(.minutes(10)))
struct FaultTests {
    /// Counts the loop's `beforeWaiting` notifications, for another thread to watch.
    final class WaitCounter: Sendable {
        let count = Atomic<Int>(0)

        /// An observer that counts.
        func observer() -> EVObserver {
            EVObserver(activities: .beforeWaiting) { _, _ in self.count.add(1, ordering: .releasing) }
        }

        /// Spins until the loop's next `beforeWaiting` (at most `patience`): the loop is then
        /// about to wait, not yet asleep, so a wake reaches it within microseconds.
        func awaitNextWait(patience: Duration = .seconds(1)) {
            let clock = ContinuousClock()
            let until = clock.now + patience
            let seen = count.load(ordering: .acquiring)
            while count.load(ordering: .acquiring) == seen, clock.now < until {}
        }
    }

    @Test("timers and sources added, then invalidated from another thread, never stay in the loop")
    func addThenInvalidateFromAnotherThread() async {
        let (stale, idlePasses) = await onFreshThreadAwaiting { () -> (Int, Int) in
            let loop = EVRunLoop.current
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            let waits = WaitCounter()
            let observer = waits.observer()
            loop.add(observer, forMode: .default)
            // Keeps the loop passing (and announcing its waits) every 0.1 ms.
            let ticker = EVTimer(interval: .microseconds(100), repeats: true) { _ in }
            loop.add(ticker, forMode: .default)
            let made = Mutex<([EVTimer], [EVSource])>(([], []))
            Thread.detachNewThread {
                let clock = ContinuousClock()
                for round in 0..<5_000 {
                    // Add while the loop is about to sleep, so that its wait's drain takes the
                    // add while this thread invalidates, after a delay that varies by round.
                    waits.awaitNextWait()
                    let timer = EVTimer(interval: 0, repeats: false) { _ in }
                    let source = EVSource { _ in }
                    loop.add(timer, forMode: .default)
                    loop.add(source, forMode: .default)
                    let until = clock.now + .nanoseconds(round % 60 * 500)
                    while clock.now < until {}
                    timer.invalidate()
                    source.invalidate()
                    made.withLock { $0.0.append(timer); $0.1.append(source) }
                }
                loop.perform { loop.stop() }
            }
            loop.run()
            observer.invalidate()
            ticker.invalidate()
            loop.run(mode: .default, until: Date())  // takes anything still in the inbox
            let (timers, sources) = made.withLock { $0 }
            let stale = timers.filter { loop.contains($0, inMode: .default) }.count
                + sources.filter { loop.contains($0, inMode: .default) }.count
            loop.resetStatistics()
            loop.run(mode: .default, for: .milliseconds(300))
            keepAlive.invalidate()
            return (stale, loop.statistics.passes)
        }
        #expect(stale == 0)
        #expect(idlePasses < 10)
    }

    @Test("a tolerant timer parked at distantFuture never fires and does not spin the loop")
    func distantFutureWithTolerance() async {
        let (fired, passes) = await onFreshThreadAwaiting { () -> (Bool, Int) in
            let loop = EVRunLoop.current
            let fired = LoopBox(false)
            let timer = EVTimer(interval: 1, repeats: true, tolerance: 0.1) { _ in fired.value = true }
            loop.add(timer, forMode: .default)
            timer.fireDate = .distantFuture
            loop.resetStatistics()
            loop.run(mode: .default, for: .milliseconds(300))
            timer.invalidate()
            return (fired.value, loop.statistics.passes)
        }
        #expect(!fired)
        #expect(passes < 10)
    }

    @Test("an interval of Int64.max seconds, or an instant beyond the clock, means never")
    func hugeIntervals() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let log = Recorder()
        loop.add(EVTimer(interval: .seconds(Int64.max), repeats: false) { _ in log.append("once") },
                 forMode: .default)
        loop.add(EVTimer(interval: .seconds(Int64.max), repeats: true, tolerance: .seconds(1)) { _ in
            log.append("repeating")
        }, forMode: .default)
        loop.add(EVTimer(fireAt: EVRunLoop.Instant(nanoseconds: .max), tolerance: .seconds(1)) { _ in
            log.append("at max")
        }, forMode: .default)
        loop.add(EVTimer(interval: .seconds(1), repeats: false) { _ in log.append("marker") }, forMode: .default)
        let result = loop.run(mode: .default, for: .seconds(10))
        #expect(log.lines == ["marker"])
        #expect(result == .timedOut)
    }

    /// In a child process of its own, where no other test opens a file that takes a closed
    /// number (`fcntl` would find it open) or forks a child holding a copy of the pipe (its
    /// reader would stay open): both happened in the test process.
    @Test("a source made with closesDescriptor closes its descriptor on invalidate, on its loop or never added")
    func ownedDescriptor() async {
        await #expect(processExitsWith: .success) {
            func isClosed(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) == -1 && errno == EBADF }
            let loop = currentLoopOfThisThread()
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { exit(3) }
            let added = try! EVSource(fileDescriptor: fds[0], closesDescriptor: true) { _ in }
            loop.add(added, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            added.invalidate()
            guard isClosed(fds[0]) else { exit(4) }
            var other: [Int32] = [0, 0]
            guard pipe(&other) == 0 else { exit(3) }
            let unadded = try! EVSource(fileDescriptor: other[0], closesDescriptor: true) { _ in }
            guard !isClosed(other[0]) else { exit(5) }
            unadded.invalidate()
            exit(isClosed(other[0]) ? 0 : 6)
        }
    }

    @Test("two sources for one signal on one loop: the disposition comes back after the last invalidate")
    func twoSourcesOneSignal() async {
        let (fired, afterFirst, afterSecond) = await onFreshThreadAwaiting { () -> (Int, Bool, Bool) in
            // A signal no other test of this process watches: this one sets its disposition,
            // which a source of another test running beside it would rightly refuse.
            let previous = signal(SIGPWR, SIG_IGN)
            defer { signal(SIGPWR, previous) }
            func ignored() -> Bool {
                var now = sigaction()
                sigaction(SIGPWR, nil, &now)
                return unsafeBitCast(now.__sigaction_handler.sa_handler, to: Int.self)
                    == unsafeBitCast(SIG_IGN, to: Int.self)
            }
            let loop = EVRunLoop.current
            let fired = LoopBox(0)
            let first = EVSource(signal: SIGPWR) { _ in fired.value += 1 }
            let second = EVSource(signal: SIGPWR) { _ in fired.value += 1 }
            loop.add(first, forMode: .default)
            loop.add(second, forMode: .default)
            pthread_kill(pthread_self(), SIGPWR)
            loop.run(mode: .default, for: .milliseconds(200), returnAfterSourceHandled: false)
            first.invalidate()
            let afterFirst = ignored()
            second.invalidate()
            return (fired.value, afterFirst, ignored())
        }
        #expect(fired == 2)
        #expect(!afterFirst)
        #expect(afterSecond)
    }

    @Test("invalidating a signal source restores the signal's previous disposition")
    func signalDispositionRestored() {
        let restored = onFreshThread { () -> Bool in
            let previous = signal(SIGWINCH, SIG_IGN)
            defer { signal(SIGWINCH, previous) }
            let loop = EVRunLoop.current
            let source = EVSource(signal: SIGWINCH) { _ in }
            loop.add(source, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))
            source.invalidate()
            var now = sigaction()
            sigaction(SIGWINCH, nil, &now)
            return unsafeBitCast(now.__sigaction_handler.sa_handler, to: Int.self)
                == unsafeBitCast(SIG_IGN, to: Int.self)
        }
        #expect(restored)
    }

    @Test("a frame timer that was never added is freed")
    func frameTimerNeverAdded() {
        let link = WeakBox<EVFrameTimer>()
        do {
            let frameTimer = EVFrameTimer(framesPerSecond: 60) { _ in }
            link.object = frameTimer
        }
        #expect(link.object == nil)
    }

    @Test("a frame timer left on the loop of a thread that exits does not keep that loop alive, nor itself")
    func frameTimerOnExitedThread() {
        let loop = WeakBox<EVRunLoop>()
        let link = WeakBox<EVFrameTimer>()
        onJoinedThread {
            let current = EVRunLoop.current
            let frameTimer = EVFrameTimer(framesPerSecond: 60) { _ in }
            current.add(frameTimer, forMode: .default)
            current.run(mode: .default, for: .milliseconds(20))
            loop.object = current
            link.object = frameTimer
        }
        #expect(loop.object == nil)
        #expect(link.object == nil)
    }

    @Test("an idle source left on the loop of a thread that exits goes with the loop")
    func idleSourceOnExitedThread() {
        let loop = WeakBox<EVRunLoop>()
        let source = WeakBox<EVSource>()
        onJoinedThread {
            let current = EVRunLoop.current
            let idle = EVSource.idle { _ in }
            current.add(idle, forMode: .default)
            _ = current.run(mode: .default, for: .zero)
            loop.object = current
            source.object = idle
        }
        #expect(loop.object == nil)
        #expect(source.object == nil)
    }

    @Test("work queued to a loop whose thread has exited does not keep that loop alive")
    func workForExitedThread() {
        let weakLoop = WeakBox<EVRunLoop>()
        let weakVirtual = WeakBox<EVRunLoop>()
        do {
            let loop = onJoinedThread { EVRunLoop.current }
            loop.perform { _ = loop }
            loop.add(EVTimer(interval: 1, repeats: false) { _ in }, forMode: .default)
            loop.add(EVSource { _ in }, forMode: .default)
            weakLoop.object = loop
            let virtual = onJoinedThread { () -> EVRunLoop in
                let loop = EVRunLoop(clock: EVVirtualClock())
                loop.add(EVTimer(interval: 1, repeats: false) { _ in _ = loop }, forMode: .default)
                return loop
            }
            virtual.perform { _ = virtual }
            weakVirtual.object = virtual
        }
        #expect(weakLoop.object == nil)
        #expect(weakVirtual.object == nil)
    }

    @Test("adding and invalidating 100,000 common-mode timers, manual sources and observers finishes (O(log n) each)")
    func manyRemovals() async {
        let count = 100_000
        let left = await onFreshThreadAwaiting { () -> Int in
            let loop = EVRunLoop(clock: EVVirtualClock())
            loop.addCommonMode("other")
            let timers = (0..<count).map { _ in EVTimer(interval: 1, repeats: false) { _ in } }
            let sources = (0..<count).map { _ in EVSource { _ in } }
            let observers = (0..<count / 2).map { _ in EVObserver(activities: .entry) { _, _ in } }
            for timer in timers { loop.add(timer, forMode: .common) }
            for source in sources { loop.add(source, forMode: .common) }
            for observer in observers { loop.add(observer, forMode: .common) }
            for timer in timers { timer.invalidate() }
            for observer in observers { observer.invalidate() }
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                for source in sources { source.invalidate() }
                done.signal()
            }
            done.wait()
            loop.run(mode: .default, until: Date())
            return timers.filter { loop.contains($0, inMode: .common) }.count
                + sources.filter { loop.contains($0, inMode: .common) }.count
        }
        #expect(left == 0)
    }
}
