import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
@testable import RunLoopKitGLib
import RunLoopKitTestSupport
import Testing

/// fork() while another thread of the parent holds RunLoopKitGLib's process-wide lock (the
/// record of hosted contexts and attached loops, taken by every host, unhost, attach and
/// detach): the child's next host stops with a message that names the lock and fork(), never
/// with the runtime's anonymous trap, and the parent goes on. The lock is held open at the
/// fork by a debug hook at a gate (``HeldLockFork``); the scenario forks inside a child
/// process of the test runner.
@Suite("Real time: fork while GLib's lock is held", .timeLimit(.minutes(5)))
struct GLibForkHeldLockTests {
    @Test("fork() while another thread hosts a context: the child's host names RunLoopKitGLib's record and fork(); the parent's host goes on")
    func contextsHeldAtFork() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let theirs = UInt(bitPattern: g_main_context_new())
            let mine = g_main_context_new()
            let gate = HeldLockFork.Gate()
            GLibContexts.claimHostHoldingUsesHookForTests.withLock { $0 = { gate.hold() } }
            let hosted = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let host = EVRunLoop.current.host(OpaquePointer(bitPattern: theirs))
                if host.isHosting { hosted.signal() }
                host.unhost()
            }
            let child = gate.forkWhileHeld(expectingRefusal: ["after fork()", "RunLoopKitGLib's record of the hosted GMainContexts"]) {
                loopOfThisThread().host(mine)
            }
            let parentHosted = hosted.wait(timeout: .now() + 10) == .success
            FileHandle.standardError.write(Data("child: \(child)\nparent hosted the context: \(parentHosted)\n".utf8))
            exit(0)
        }
        let text = standardError(result)
        #expect(text.contains("child: refused\n"), "\(text)")
        #expect(text.contains("parent hosted the context: true"), "\(text)")
    }
}
