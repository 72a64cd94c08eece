import Foundation
import RunLoopKit
import Synchronization

/// A real loop running on a thread of its own for the length of a test: its default mode is
/// kept alive by a manual source, and ``stop()`` ends it.
final class LoopThread: Sendable {
    let loop: EVRunLoop
    /// The thread the loop runs on.
    let thread: pthread_t
    private let done = DispatchSemaphore(value: 0)
    private let stopping = Counter()

    init() {
        let ready = DispatchSemaphore(value: 0)
        let made = Mutex<(EVRunLoop, pthread_t)?>(nil)
        let stopping = stopping
        let done = done
        Thread.detachNewThread {
            let loop = EVRunLoop.current
            let keepAlive = EVSource { _ in }
            loop.add(keepAlive, forMode: .default)
            made.withLock { $0 = (loop, pthread_self()) }
            ready.signal()
            while stopping.value == 0 { loop.run(mode: .default, for: .seconds(1)) }
            keepAlive.invalidate()
            done.signal()
        }
        ready.wait()
        (loop, thread) = made.withLock { $0! }
    }

    /// Runs `body` on the loop's thread and returns its result.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Mutex<T?>(nil)
        let finished = DispatchSemaphore(value: 0)
        loop.perform {
            result.withLock { $0 = body() }
            finished.signal()
        }
        finished.wait()
        return result.withLock { $0! }
    }

    /// Ends the loop's run and waits for the thread to finish.
    func stop() {
        stopping.add()
        loop.stop()
        done.wait()
    }
}

/// Whether `body` returned within `limit`: it runs in a task of its own, left behind if it
/// hangs, while the caller waits without holding a thread.
func returnsWithin(_ limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let returned = Counter()
    Task.detached {
        await body()
        returned.add()
    }
    let deadline = ContinuousClock.now + limit
    while returned.value == 0 && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    return returned.value > 0
}

/// Whether `semaphore` is signalled within `limit`, for async code: it is polled between
/// short sleeps, so the waiting task holds no thread of the Swift concurrency pool (on Linux,
/// libdispatch's workers, shared with `DispatchQueue.global()`), which a blocking wait would
/// take from the tasks the awaited event may need.
func signalled(_ semaphore: DispatchSemaphore, within limit: Duration) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while semaphore.wait(timeout: .now()) != .success {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
