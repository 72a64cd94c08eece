import Foundation
import RunLoopKit
import Testing

/// Programmer errors stop the program with a message naming the call.
@Suite("Misuse")
struct MisuseTests {
    @Test("running a loop from another thread")
    func runOffThread() async {
        await #expect(processExitsWith: .failure) {
            let loop = EVRunLoop(clock: EVVirtualClock())
            let thread = Thread { loop.run(mode: .default, for: .seconds(1)) }
            thread.start()
            sleep(5)  // the loop's thread stops the process first
        }
    }

    @Test("adding an invalidated observer")
    func invalidatedObserver() async {
        await #expect(processExitsWith: .failure) {
            let observer = EVObserver(activities: .entry) { _, _ in }
            observer.invalidate()
            EVRunLoop(clock: EVVirtualClock()).add(observer, forMode: .default)
        }
    }

    @Test("a NaN deadline")
    func nanDeadline() async {
        await #expect(processExitsWith: .failure) {
            EVRunLoop(clock: EVVirtualClock()).run(mode: .default, until: Date(timeIntervalSince1970: .nan))
        }
    }

    @Test("running the .common pseudo-mode")
    func runCommon() async {
        await #expect(processExitsWith: .failure) {
            EVRunLoop(clock: EVVirtualClock()).run(mode: .common, for: .seconds(1))
        }
    }

    @Test("adding an observer to a second loop")
    func observerInTwoLoops() async {
        await #expect(processExitsWith: .failure) {
            let observer = EVObserver(activities: .entry) { _, _ in }
            let first = EVRunLoop(clock: EVVirtualClock())
            first.add(observer, forMode: .default)
            withExtendedLifetime(first) {
                EVRunLoop(clock: EVVirtualClock()).add(observer, forMode: .default)
            }
        }
    }
}
