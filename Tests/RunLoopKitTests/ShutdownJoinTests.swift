import Foundation
@testable import RunLoopKit
import Synchronization
import Testing

/// ``EVRunLoop/shutdown()`` joins the loop's thread without a libdispatch worker: on Linux
/// the Swift concurrency global executor and `DispatchQueue.global()` draw on libdispatch's
/// workers, and work that blocks them (a semaphore in a task, a sleep) would otherwise hold
/// the join back, and the shutdown with it. The test calls the async form's join directly:
/// an `await` resumes on those workers too, so with all of them blocked no awaiting test
/// could see the shutdown return.
@Suite("Real time: shutting down with libdispatch's workers blocked", .timeLimit(.minutes(10)))
struct ShutdownJoinTests {
    /// More work items than libdispatch starts workers for, each blocked until released.
    static let blockers = 512

    @Test("the async shutdown's join runs while every global worker is blocked")
    func joinsWithWorkersBlocked() {
        let loop = EVRunLoop.startThread(name: "workers-busy")
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<Self.blockers { DispatchQueue.global().async { release.wait() } }
        let joined = DispatchSemaphore(value: 0)
        let host = loop.hostThread.withLock { $0 }
        #expect(host != nil)
        host?.shutDown(loop, blocking: false) { joined.signal() }
        let returned = joined.wait(timeout: .now() + 10) == .success
        for _ in 0..<Self.blockers { release.signal() }
        if !returned { _ = joined.wait(timeout: .now() + 60) }
        #expect(returned, "the async shutdown's join did not end within 10 s with \(Self.blockers) global work items blocked")
    }
}
