import Foundation
@testable import RunLoopKit
import Synchronization
import Testing

/// A shutdown that lands in the instant a nested run ends: the run's end restores the stop
/// request of the run it was nested in, and must not overwrite the shutdown's. The window
/// (between the run's read of the shutdown's flag and its store of the stop request) is held
/// open by a test seam (``TestSeams/leaveRunBeforeStopStore``), so it is hit every time.
@Suite("Real time: a shutdown as a nested run ends", .timeLimit(.minutes(10)))
struct ShutdownRaceTests {
    @Test("a shutdown between a nested run's read of the stop and its store ends the thread's run")
    func shutdownAsNestedRunEnds() {
        let loop = EVRunLoop.startThread(name: "leave-race")
        let nestedReturned = DispatchSemaphore(value: 0)
        let shutdownReturned = DispatchSemaphore(value: 0)
        let flagsSeen = Atomic<Bool>(false)
        loop.perform(inModes: [.common], label: "nests") {
            loop.shared.seams.withLock {
                $0.leaveRunBeforeStopStore = {
                    loop.shared.seams.withLock { $0.leaveRunBeforeStopStore = nil }
                    Thread.detachNewThread {
                        loop.syncShutdown()
                        shutdownReturned.signal()
                    }
                    // The shutdown has set its flags before this run stores its own.
                    let deadline = ContinuousClock.now + .seconds(10)
                    while !(loop.shared.stopsEveryRun.load(ordering: .acquiring) && loop.isStopRequested),
                          ContinuousClock.now < deadline { sched_yield() }
                    flagsSeen.store(loop.shared.stopsEveryRun.load(ordering: .acquiring), ordering: .releasing)
                }
            }
            _ = loop.run(mode: .default, for: .milliseconds(1))
            nestedReturned.signal()
        }
        #expect(nestedReturned.wait(timeout: .now() + 10) == .success)
        let sawFlags = flagsSeen.load(ordering: .acquiring)
        #expect(sawFlags, "the shutdown did not set its flags within 10 s")
        let returned = shutdownReturned.wait(timeout: .now() + 10) == .success
        #expect(returned, "syncShutdown() did not return within 10 s: the nested run's end lost its stop")
        if !returned {
            // Lets the thread end, so that the test leaves no thread behind.
            loop.stop()
            _ = shutdownReturned.wait(timeout: .now() + 60)
        }
    }
}
