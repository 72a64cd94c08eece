import Foundation
@testable import RunLoopKit
import Synchronization
import Testing

/// ``EVRunLoop/shutdown()`` joins the loop's thread without a libdispatch worker: on Linux
/// the Swift concurrency global executor and `DispatchQueue.global()` draw on libdispatch's
/// workers, and work that blocks them (a semaphore in a task, a sleep) would otherwise hold
/// the join back, and the shutdown with it. The test calls the async form's join directly:
/// an `await` resumes on those workers too, so with all of them blocked no awaiting test
/// could see the shutdown return. It blocks them in a child process (an exit test), so that
/// the other tests of the run keep theirs.
@Suite("Real time: shutting down with libdispatch's workers blocked", .timeLimit(.minutes(10)))
struct ShutdownJoinTests {
    @Test("the async shutdown's join runs while every global worker is blocked")
    func joinsWithWorkersBlocked() async {
        // Exit status 1: the join did not end within 10 s.
        await #expect(processExitsWith: .success) {
            let loop = EVRunLoop.startThread(name: "workers-busy")
            // More work items than libdispatch starts workers for, each blocked for good.
            let blocked = DispatchSemaphore(value: 0)
            for _ in 0..<512 { DispatchQueue.global().async { blocked.wait() } }
            let joined = DispatchSemaphore(value: 0)
            guard let host = loop.hostThread.withLock({ $0 }) else { exit(2) }
            host.shutDown(loop, blocking: false) { joined.signal() }
            exit(joined.wait(timeout: .now() + 10) == .success ? 0 : 1)
        }
    }
}
