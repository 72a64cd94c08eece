import Foundation
import RunLoopKit
import Testing

/// Programmer errors stop the program with a message naming the call, on standard error.
@Suite("Misuse", .timeLimit(.minutes(10)))
struct MisuseTests {
    @Test("running a loop from another thread")
    func runOffThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = EVRunLoop(clock: EVVirtualClock())
            let returned = DispatchSemaphore(value: 0)
            let thread = Thread {
                loop.run(mode: .default, for: .seconds(1))
                returned.signal()
            }
            thread.start()
            // The loop's thread stops the process; a run that returned instead ends the test.
            _ = returned.wait(timeout: .now() + 60)
        }
        #expect(standardError(result).contains("called off the loop's thread"))
    }

    @Test("adding an invalidated observer")
    func invalidatedObserver() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let observer = EVObserver(activities: .entry) { _, _ in }
            observer.invalidate()
            EVRunLoop(clock: EVVirtualClock()).add(observer, forMode: .default)
        }
        #expect(standardError(result).contains("EVRunLoop.add(_:forMode:): observer  is invalidated"))
    }

    @Test("a NaN deadline")
    func nanDeadline() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVRunLoop(clock: EVVirtualClock()).run(mode: .default, until: Date(timeIntervalSince1970: .nan))
        }
        #expect(standardError(result).contains("EVRunLoop.run(mode:until:returnAfterSourceHandled:): deadline is NaN"))
    }

    @Test("running the .common pseudo-mode")
    func runCommon() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVRunLoop(clock: EVVirtualClock()).run(mode: .common, for: .seconds(1))
        }
        #expect(standardError(result).contains("EVRunLoop.run(mode:for:returnAfterSourceHandled:): .common is not a mode that can run"))
    }

    @Test("adding an observer to a second loop")
    func observerInTwoLoops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let observer = EVObserver(activities: .entry) { _, _ in }
            let first = EVRunLoop(clock: EVVirtualClock())
            first.add(observer, forMode: .default)
            withExtendedLifetime(first) {
                EVRunLoop(clock: EVVirtualClock()).add(observer, forMode: .default)
            }
        }
        #expect(standardError(result).contains("belongs to another loop"))
    }

    @Test("a descriptor source on the loop's own poll descriptor")
    func sourceOnOwnPollDescriptor() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = EVRunLoop.startThread(name: "itself")
            let source = try EVSource(fileDescriptor: loop.pollDescriptor, label: "itself") { _ in }
            loop.add(source, forMode: .default)
            // The add stops the process, or else the loop's thread does; a loop that went on
            // watching ends the test.
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 5)
        }
        #expect(standardError(result).contains(
            "EVRunLoop.add(_:forMode:): source 'itself' watches this loop's own pollDescriptor"))
    }

    @Test("the library checks misuse with a helper whose message survives -O, never with precondition")
    func noPreconditionInSources() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let files = ["Sources/RunLoopKit", "Sources/RunLoopKitPlatform", "Sources/RunLoopKitGLib"].flatMap { folder in
            FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        }
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for word in ["precondition(", "preconditionFailure(", "assert(", "assertionFailure("] {
                #expect(!text.contains(word), "\(file.lastPathComponent) uses \(word)")
            }
        }
    }
}
