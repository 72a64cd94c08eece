import Foundation
@testable import RunLoopKit
import Testing

/// `LoopBound`: a value only its loop's thread may touch, checked on every access.
@Suite("LoopBound", .timeLimit(.minutes(1)))
struct LoopBoundTests {
    @Test("the loop's thread reads and writes the value")
    func onLoopThread() {
        let bound = LoopBound(1, loop: EVRunLoop(clock: EVVirtualClock()))
        bound.value += 1
        #expect(bound.value == 2)
    }

    @Test("a read from another thread stops the program with a message")
    func readOffThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let bound = LoopBound(1, loop: EVRunLoop(clock: EVVirtualClock()))
            let thread = Thread { _ = bound.value }
            thread.start()
            sleep(5)  // the other thread stops the process first
        }
        #expect(standardError(result).contains("a LoopBound value was touched off its loop's thread"))
    }

    @Test("a write from another thread stops the program with a message")
    func writeOffThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let bound = LoopBound(1, loop: EVRunLoop(clock: EVVirtualClock()))
            let thread = Thread { bound.value = 2 }
            thread.start()
            sleep(5)  // the other thread stops the process first
        }
        #expect(standardError(result).contains("a LoopBound value was touched off its loop's thread"))
    }
}
