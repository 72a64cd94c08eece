import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// A loop driven by another loop through its poll descriptor: what makes the descriptor
/// readable, the deadline it comes with, and the same callouts as `run` gives. (Every
/// CF-compared scenario of `PassOrderTests`, `TimerScenarioTests`, `SourceOrderTests`,
/// `NestedRunTests` and `WakeWindowTests` also runs on a loop driven from a `poll()` loop:
/// ``LoopKind/polled``.)
@Suite("A loop driven by another loop", .timeLimit(.minutes(10)))
struct PolledLoopTests {
    /// Polls `loop`'s descriptor once with `timeout` (ms); whether it was readable.
    static func pollOnce(_ loop: EVRunLoop, timeout: Int32) -> Bool {
        var watch = pollfd(fd: loop.pollDescriptor, events: Int16(POLLIN), revents: 0)
        // A caught signal interrupts poll() whatever SA_RESTART says: poll again, as a
        // program driving the loop must.
        var ready = poll(&watch, 1, timeout)
        while ready == -1 && errno == EINTR { ready = poll(&watch, 1, timeout) }
        return ready == 1
    }

    /// Drives `loop`'s default mode from a `poll()` loop until `done()` or `limit` passes;
    /// counts the polls that found the descriptor readable, and those that timed out.
    static func drive(_ loop: EVRunLoop, for limit: Duration, until done: () -> Bool = { false }) -> (readable: Int, timedOut: Int) {
        let end = loop.now + limit
        var readable = 0, timedOut = 0
        while !done(), loop.now < end {
            let deadline = loop.preparePolledPass(mode: .default, until: end)
            if pollOnce(loop, timeout: deadline.milliseconds(from: loop.now)) { readable += 1 } else { timedOut += 1 }
            if loop.dispatchPolledPass() != nil { break }
        }
        loop.endPolledRun()
        return (readable, timedOut)
    }

    @Test("a timer due makes the descriptor readable at its fire date, without the deadline's timeout")
    func timerWakesDescriptor() {
        let (late, readable) = onFreshThread { () -> (Duration, Bool) in
            let loop = EVRunLoop.current
            // The fire date is taken in `add`: between these two readings (a loaded machine can
            // hold the thread off the CPU between any two lines).
            let beforeAdd = loop.now
            let fired = LoopBox<EVRunLoop.Instant?>(nil)
            loop.add(EVTimer(interval: 0.03, repeats: false) { _ in fired.value = loop.now }, forMode: .default)
            let afterAdd = loop.now
            let fireAt = afterAdd + .milliseconds(30)
            let deadline = loop.preparePolledPass()
            guard case .at(let instant) = deadline else {
                Issue.record("deadline \(deadline), want .at")
                return (.zero, false)
            }
            #expect(instant >= beforeAdd + .milliseconds(29) && instant <= fireAt + .milliseconds(1))
            // No timeout: only the descriptor can end this poll.
            let readable = Self.pollOnce(loop, timeout: 5_000)
            loop.dispatchPolledPass()
            loop.endPolledRun()
            return ((fired.value ?? fireAt + .seconds(9)) - instant, readable)
        }
        #expect(readable)
        #expect(late >= .zero && late < .milliseconds(200), "fired \(late) after its deadline")
    }

    @Test("a wakeUp, a perform and a stop from another thread make the descriptor readable")
    func wakesFromAnotherThread() {
        let results = onFreshThread { () -> [Bool] in
            let loop = EVRunLoop.current
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            var results: [Bool] = []
            let performed = LoopBox(false)
            let wakes: [@Sendable () -> Void] = [
                { loop.wakeUp() },
                { loop.perform { performed.value = true } },
                { loop.stop() },
            ]
            for wake in wakes {
                #expect(loop.preparePolledPass() == .never)
                Thread.detachNewThread {
                    Thread.sleep(forTimeInterval: 0.02)
                    wake()
                }
                results.append(Self.pollOnce(loop, timeout: 10_000))
                _ = loop.dispatchPolledPass()
            }
            loop.endPolledRun()
            keepAlive.invalidate()
            results.append(performed.value)
            return results
        }
        #expect(results == [true, true, true, true])
    }

    @Test("a descriptor source and a caught signal make the descriptor readable")
    func kernelSourcesWakeDescriptor() throws {
        let fired = try onFreshThread { () -> Result<[String], EVRunLoop.Error> in
            let loop = EVRunLoop.current
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let log = LoopBox<[String]>([])
            let reader = fds[0]
            let pipeSource: EVSource
            do throws(EVRunLoop.Error) {
                pipeSource = try EVSource(fileDescriptor: reader) { _ in
                    var byte: UInt8 = 0
                    _ = read(reader, &byte, 1)
                    log.value.append("pipe")
                }
            } catch { return .failure(error) }
            let signalSource = EVSource(signal: SIGURG) { _ in log.value.append("signal") }
            loop.add(pipeSource, forMode: .default)
            loop.add(signalSource, forMode: .default)
            defer { pipeSource.invalidate(); signalSource.invalidate() }

            #expect(loop.preparePolledPass() == .never)
            let writer = fds[1]
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 0.02)
                var byte: UInt8 = 1
                _ = write(writer, &byte, 1)
            }
            #expect(Self.pollOnce(loop, timeout: 10_000))
            loop.dispatchPolledPass()

            #expect(loop.preparePolledPass() == .never)
            // To the polling thread: its poll() is interrupted (EINTR) and must go on to see
            // the descriptor the handler made readable.
            let poller = pthread_self()
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 0.02)
                pthread_kill(poller, SIGURG)
            }
            #expect(Self.pollOnce(loop, timeout: 10_000))
            loop.dispatchPolledPass()
            loop.endPolledRun()
            return .success(log.value)
        }.get()
        #expect(fired == ["pipe", "signal"])
    }

    @Test("a block performed on the loop's thread while the pass waits makes the deadline now")
    func blockOnLoopThread() {
        let (deadlines, ran) = onFreshThread { () -> ([EVRunLoop.PollDeadline], Bool) in
            let loop = EVRunLoop.current
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            let ran = LoopBox(false)
            var deadlines = [loop.preparePolledPass()]
            loop.perform { ran.value = true }  // the driving loop's code, between prepare and poll
            deadlines.append(loop.preparePolledPass())
            #expect(!Self.pollOnce(loop, timeout: deadlines[1].milliseconds(from: loop.now)))
            loop.dispatchPolledPass()
            loop.endPolledRun()
            keepAlive.invalidate()
            return (deadlines, ran.value)
        }
        #expect(deadlines == [.never, .now])
        #expect(ran)
    }

    @Test("timers with tolerance share the wakes they share under run")
    func toleranceCoalesces() async {
        // Three timers whose tolerances overlap: a run wakes once for all three, and so must
        // a loop driven from a poll() loop.
        func scenario(polled: Bool) async -> (log: [String], wakes: Int) {
            await onFreshThreadAwaiting {
                let loop = EVRunLoop.current
                let log = LoopBox<[String]>([])
                let start = loop.now
                for (name, after, tolerance) in [("a", 0.05, 0.1), ("b", 0.08, 0.05), ("c", 0.1, 0.0)] {
                    let timer = EVTimer(interval: after, repeats: false, tolerance: tolerance) { _ in
                        let at = loop.now - start
                        log.value.append("\(name)\(at >= .milliseconds(Int64(after * 1000)) ? "" : " early")")
                    }
                    loop.add(timer, forMode: .default)
                }
                loop.add(EVObserver(activities: [.beforeWaiting, .afterWaiting]) { _, activity in
                    log.value.append("\(activity)")
                }, forMode: .default)
                loop.resetStatistics()
                if polled {
                    _ = Self.drive(loop, for: .seconds(5))
                } else {
                    loop.run(mode: .default, for: .seconds(5))
                }
                return (log.value, loop.statistics.wakeups)
            }
        }
        let ran = await scenario(polled: false)
        let polled = await scenario(polled: true)
        #expect(ran.log == ["beforeWaiting", "afterWaiting", "a", "b", "c"])
        #expect(polled.log == ran.log)
        #expect(polled.wakes == ran.wakes)
    }

    @Test("an empty mode opens no run and polls until a wake brings work")
    func emptyModeWaits() async {
        let (first, ran, mode) = await onFreshThreadAwaiting { () -> (EVRunLoop.PollDeadline, Bool, EVRunLoop.Mode?) in
            let loop = EVRunLoop.current
            let ran = LoopBox(false)
            let first = loop.preparePolledPass()
            let mode = loop.currentMode
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 0.02)
                loop.perform { ran.value = true }
            }
            _ = Self.drive(loop, for: .seconds(2)) { ran.value }
            return (first, ran.value, mode)
        }
        #expect(first == .never)
        #expect(mode == nil)
        #expect(ran)
    }

    @Test("a poll timeout is the deadline's milliseconds, rounded up")
    func milliseconds() {
        let now = EVRunLoop.Instant(nanoseconds: 1_000_000_000)
        #expect(EVRunLoop.PollDeadline.now.milliseconds(from: now) == 0)
        #expect(EVRunLoop.PollDeadline.never.milliseconds(from: now) == -1)
        #expect(EVRunLoop.PollDeadline.at(now - .seconds(1)).milliseconds(from: now) == 0)
        #expect(EVRunLoop.PollDeadline.at(now + .nanoseconds(1)).milliseconds(from: now) == 1)
        #expect(EVRunLoop.PollDeadline.at(now + .milliseconds(5)).milliseconds(from: now) == 5)
        #expect(EVRunLoop.PollDeadline.at(.distantFuture).milliseconds(from: now) == .max)
    }

    @Test("polling from another thread stops with a message")
    func offThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = onFreshThread { currentLoopOfThisThread() }
            _ = loop.preparePolledPass()
        }
        #expect(standardError(result).contains("EVRunLoop.preparePolledPass(mode:until:returnAfterSourceHandled:) called off the loop's thread"))
    }

    @Test("polling inside a run of the loop stops with a message")
    func insideRun() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = currentLoopOfThisThread()
            loop.perform { _ = loop.preparePolledPass() }
            loop.run(mode: .default, for: .seconds(1))
        }
        #expect(standardError(result).contains("called inside a run of the loop"))
    }

    @Test("a virtual loop has no poll descriptor")
    func virtualLoop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVRunLoop(clock: EVVirtualClock()).pollDescriptor
        }
        #expect(standardError(result).contains("EVRunLoop.pollDescriptor: a loop on a virtual clock has no descriptor"))
    }
}

extension PolledLoopTests {
    @Test("preparing again before the dispatch keeps what the first prepare collected")
    func prepareTwice() {
        let deadlines = onFreshThread { () -> [EVRunLoop.PollDeadline] in
            let loop = EVRunLoop.current
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            let once = LoopBox(true)
            // A wake sent in the pass's first half: the first prepare collects it.
            loop.add(EVObserver(activities: .beforeWaiting) { _, _ in
                if once.value { loop.wakeUp() }
                once.value = false
            }, forMode: .default)
            let deadlines = [loop.preparePolledPass(), loop.preparePolledPass()]
            loop.dispatchPolledPass()
            loop.endPolledRun()
            keepAlive.invalidate()
            return deadlines
        }
        #expect(deadlines == [.now, .now])
    }

    @Test("a descriptor source added between two prepares of one wait is in the polled set")
    func sourceAddedBetweenPrepares() {
        let (second, readable, fired) = onFreshThread { () -> (EVRunLoop.PollDeadline?, Bool, Bool) in
            let loop = EVRunLoop.current
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            defer { keepAlive.invalidate() }
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return (nil, false, false) }
            defer { close(fds[1]) }
            // The first prepare polls libev; the second, with nothing collected and the same
            // deadline, must poll it again because a watch changed in between.
            #expect(loop.preparePolledPass() == .never)
            var byte: UInt8 = 1
            _ = write(fds[1], &byte, 1)
            let fired = LoopBox(false)
            let reader = fds[0]
            guard let source = try? EVSource(fileDescriptor: reader, closesDescriptor: true, handler: { _ in
                var byte: UInt8 = 0
                _ = read(reader, &byte, 1)
                fired.value = true
            }) else { return (nil, false, false) }
            loop.add(source, forMode: .default)
            defer { source.invalidate() }
            let second = loop.preparePolledPass()
            let readable = Self.pollOnce(loop, timeout: 2_000)
            loop.dispatchPolledPass()
            loop.endPolledRun()
            return (second, readable, fired.value)
        }
        #expect(second != nil, "no pipe or no source")
        #expect(readable, "a pipe readable before the second prepare did not make the descriptor readable")
        #expect(fired)
    }
}
