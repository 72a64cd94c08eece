import Foundation
import Glibc
import RunLoopKit
import Testing

@Suite("Sources", .timeLimit(.minutes(10)))
struct SourceTests {
    @Test("a manual source signalled from another thread fires after wakeUp()", arguments: [LoopKind.virtual, .libev])
    func manualFromAnotherThread(kind: LoopKind) {
        let result = onFreshThread { () -> (EVRunLoop.RunResult, Int) in
            let loop = kind == .virtual ? EVRunLoop(clock: EVVirtualClock()) : EVRunLoop.current
            let fired = LoopBox(0)
            let source = EVSource(label: "s") { _ in fired.value += 1 }
            loop.add(source, forMode: .default)
            let waiting = DispatchSemaphore(value: 0)
            loop.add(EVObserver(activities: .beforeWaiting) { _, _ in waiting.signal() }, forMode: .default)
            Thread.detachNewThread {
                waiting.wait()  // the loop is about to wait: the wake must end that wait
                source.signal()
                loop.wakeUp()
            }
            let result = loop.run(mode: .default, until: .distantFuture, returnAfterSourceHandled: true)
            return (result, fired.value)
        }
        #expect(result.0 == .handledSource)
        #expect(result.1 == 1)
    }

    @Test("a descriptor source fires when a pipe becomes readable, and only in its mode")
    func pipeSource() {
        let log = onFreshThread { () -> [String] in
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let loop = EVRunLoop.current
            let log = Recorder()
            let readEnd = fds[0]
            guard let source = try? EVSource(fileDescriptor: readEnd, label: "pipe", handler: { _ in
                var byte: UInt8 = 0
                let count = read(readEnd, &byte, 1)
                log.append("read \(count) \(Character(UnicodeScalar(byte)))")
            }) else { return ["EVSource(fileDescriptor:) threw for an open pipe"] }
            loop.add(source, forMode: .default)
            loop.add(EVTimer(interval: 5, repeats: false) { _ in }, forMode: "other")
            var byte = UInt8(ascii: "x")
            _ = write(fds[1], &byte, 1)
            // Readable, but the source is not in "other": nothing fires there.
            loop.run(mode: "other", for: .milliseconds(30))
            log.append("other done")
            loop.run(mode: .default, for: .seconds(5), returnAfterSourceHandled: true)
            source.invalidate()
            return log.lines
        }
        #expect(log == ["other done", "read 1 x"])
    }

    @Test("a live descriptor source's readiness changes without re-adding it")
    func readinessChanges() {
        let log = onFreshThread { () -> [String] in
            var fds: [Int32] = [0, 0]
            precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let loop = EVRunLoop.current
            let log = Recorder()
            guard let source = try? EVSource(fileDescriptor: fds[0], for: .read, label: "socket", handler: { source in
                log.append("fired for \(source.readiness == .read ? "read" : "read+write")")
            }) else { return ["EVSource(fileDescriptor:) threw for an open socket"] }
            loop.add(source, forMode: .default)
            // Writable at once, never readable: only the write interest makes it fire.
            loop.run(mode: .default, for: .milliseconds(20), returnAfterSourceHandled: true)
            log.append("read only")
            source.readiness = [.read, .write]
            loop.run(mode: .default, for: .seconds(5), returnAfterSourceHandled: true)
            source.readiness = .read
            loop.run(mode: .default, for: .milliseconds(20), returnAfterSourceHandled: true)
            log.append("read again")
            source.invalidate()
            return log.lines
        }
        #expect(log == ["read only", "fired for read+write", "read again"])
    }

    @Test("descriptor sources ready in one pass fire in the order they were added to the mode")
    func readyOrder() {
        let log = onFreshThread { () -> [String] in
            let loop = EVRunLoop.current
            let log = Recorder()
            var pipes: [[Int32]] = []
            var sources: [EVSource] = []
            for name in ["a", "b", "c"] {
                var fds: [Int32] = [0, 0]
                precondition(pipe(&fds) == 0)
                pipes.append(fds)
                let readEnd = fds[0]
                guard let source = try? EVSource(fileDescriptor: readEnd, label: name, handler: { _ in
                    var byte: UInt8 = 0
                    _ = read(readEnd, &byte, 1)
                    log.append(name)
                }) else { return ["EVSource(fileDescriptor:) threw for an open pipe"] }
                sources.append(source)
            }
            // Added c, a, b (during a run of the mode, so each is watched at once); written b, c, a.
            loop.add(EVTimer(interval: 5, repeats: false) { _ in }, forMode: .default)
            let added = sources, written = pipes
            loop.perform {
                for index in [2, 0, 1] { loop.add(added[index], forMode: .default) }
                var byte = UInt8(ascii: "x")
                for index in [1, 2, 0] { _ = write(written[index][1], &byte, 1) }
            }
            loop.run(mode: .default, for: .milliseconds(20))
            for source in sources { source.invalidate() }
            for fds in pipes { close(fds[0]); close(fds[1]) }
            return log.lines
        }
        #expect(log == ["c", "a", "b"])
    }

    @Test("a closed descriptor is refused with an error naming the call")
    func closedDescriptor() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        close(fds[1])
        #expect(throws: EVRunLoop.Error.self) {
            try EVSource(fileDescriptor: fds[0]) { _ in }
        }
        do {
            _ = try EVSource(fileDescriptor: fds[0]) { _ in }
        } catch {
            #expect(error.errno == EBADF)
            #expect(error.call.contains("fileDescriptor: \(fds[0])"))
        }
    }

    @Test("a SIGUSR1 source runs its handler on the loop's thread, not in the signal handler")
    func signalSource() {
        let (fired, onLoopThread) = onFreshThread { () -> (Int, Bool) in
            let loop = EVRunLoop.current
            let fired = LoopBox(0)
            let sameThread = LoopBox(false)
            let source = EVSource(signal: SIGUSR1, label: "usr1") { _ in
                fired.value += 1
                sameThread.value = EVRunLoop.current === loop
            }
            loop.add(source, forMode: .default)
            let waiting = DispatchSemaphore(value: 0)
            loop.add(EVObserver(activities: .beforeWaiting) { _, _ in waiting.signal() }, forMode: .default)
            Thread.detachNewThread {
                waiting.wait()  // the loop runs, its signal watcher started
                kill(getpid(), SIGUSR1)
            }
            loop.run(mode: .default, for: .seconds(5), returnAfterSourceHandled: true)
            source.invalidate()
            return (fired.value, sameThread.value)
        }
        #expect(fired == 1)
        #expect(onLoopThread)
    }
}

extension SourceTests {
    @Test("a signal blocked in the thread's inherited mask still reaches its source")
    func blockedSignal() {
        let fired = onFreshThread { () -> Bool in
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGUSR2)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            let loop = EVRunLoop.current
            let fired = LoopBox(false)
            let source = EVSource(signal: SIGUSR2) { _ in fired.value = true }
            loop.add(source, forMode: .default)
            // Directed at this thread, where it was blocked: only an unblocked mask lets it in.
            pthread_kill(pthread_self(), SIGUSR2)
            loop.run(mode: .default, for: .seconds(2), returnAfterSourceHandled: true)
            source.invalidate()
            return fired.value
        }
        #expect(fired)
    }
}

@Suite("Frame timer", .timeLimit(.minutes(10)))
struct FrameTimerTests {
    @Test("frames sit on the grid; a blocking callout drops frames, counted, never burst (virtual clock)")
    func droppedFramesVirtual() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let stamps = LoopBox<[Int64]>([])
        let link = EVFrameTimer(framesPerSecond: 100) { link in
            stamps.value.append(link.timestamp.nanoseconds / 1_000_000)
            #expect(link.targetTimestamp == link.timestamp + .milliseconds(10))
            if stamps.value.count == 3 { clock.advance(by: .milliseconds(35)) }  // a 35 ms frame
        }
        loop.add(link, forMode: .default)
        let start = clock.now.nanoseconds / 1_000_000
        loop.run(mode: .default, for: .milliseconds(95))
        let relative = stamps.value.map { $0 - start }
        #expect(relative == [10, 20, 30, 70, 80, 90])  // 40, 50, 60 dropped
        #expect(link.droppedFrames == 3)
        #expect(link.deliveredFrames == 6)
        #expect(link.duration == .milliseconds(10))
    }

    @Test("a paused link does not wake the loop; on resume it continues on the grid")
    func pause() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let count = LoopBox(0)
        let link = EVFrameTimer(framesPerSecond: 10) { _ in count.value += 1 }
        loop.add(link, forMode: .default)
        loop.add(EVSource { _ in }, forMode: .default)  // keeps the mode alive while paused
        loop.run(mode: .default, for: .milliseconds(250))
        #expect(count.value == 2)
        link.isPaused = true
        loop.resetStatistics()
        loop.run(mode: .default, for: .seconds(1))
        #expect(count.value == 2)
        #expect(loop.statistics.wakeups == 1)  // only the run's deadline
        link.isPaused = false
        loop.run(mode: .default, for: .milliseconds(200))
        #expect(count.value == 4)
        #expect(link.droppedFrames == 0)
        link.invalidate()
        #expect(!link.isValid)
    }

}

@Suite("Real time: frame timer on libev", .timeLimit(.minutes(10)))
struct RealFrameTimerTests {
    @Test("on the real loop, a callout that blocks for 50 ms drops frames")
    func droppedFramesReal() {
        let (dropped, delivered) = onFreshThread { () -> (Int, Int) in
            let loop = EVRunLoop.current
            let link = EVFrameTimer(framesPerSecond: 100) { link in
                if link.deliveredFrames == 5 { usleep(50_000) }  // the blocking callout under test
                if link.deliveredFrames == 10 { EVRunLoop.current.stop() }
            }
            loop.add(link, forMode: .default)
            // Until the tenth frame; the deadline is only for a loop that stopped delivering.
            loop.run(mode: .default, for: .seconds(30))
            link.invalidate()
            return (link.droppedFrames, link.deliveredFrames)
        }
        #expect(dropped >= 4)  // 50 ms at 10 ms a frame: at least 4 frames passed unserved
        #expect(delivered == 10)
    }
}

extension SourceTests {
    /// In a child process: other tests here catch SIGUSR1 too.
    @Test("a signal that arrived while another mode ran fires when its mode runs, without waiting")
    func signalFromAnotherMode() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            let fired = LoopBox(0)
            let source = EVSource(signal: SIGUSR1) { _ in fired.value += 1 }
            loop.add(source, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: "other")
            kill(getpid(), SIGUSR1)
            loop.run(mode: "other", for: .milliseconds(50))  // the arrival is collected here
            let start = ContinuousClock.now
            loop.run(mode: .default, for: .seconds(20), returnAfterSourceHandled: true)
            let elapsed = ContinuousClock.now - start
            print("fired \(fired.value) after \(elapsed)")
            exit(fired.value == 1 && elapsed < .seconds(5) ? 0 : 1)
        }
    }
}
