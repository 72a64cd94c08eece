import Foundation
import RunLoopKit
import Testing

/// Bad values stop the program with a message naming the parameter and the value.
@Suite("Bad input")
struct BadInputTests {
    @Test("a NaN interval")
    func nanInterval() async {
        await #expect(processExitsWith: .failure) { _ = EVTimer(interval: .nan, repeats: true) { _ in } }
    }

    @Test("an infinite tolerance")
    func infiniteTolerance() async {
        await #expect(processExitsWith: .failure) {
            _ = EVTimer(interval: 1, repeats: true, tolerance: .infinity) { _ in }
        }
    }

    @Test("a negative tolerance, set after creation")
    func negativeTolerance() async {
        await #expect(processExitsWith: .failure) {
            EVTimer(interval: 1, repeats: true) { _ in }.tolerance = -0.5
        }
    }

    @Test("a NaN fire date")
    func nanFireDate() async {
        await #expect(processExitsWith: .failure) {
            _ = EVTimer(fireAt: Date(timeIntervalSince1970: .nan)) { _ in }
        }
    }

    @Test("an aligned offset outside [0, interval)")
    func alignedOffset() async {
        await #expect(processExitsWith: .failure) { _ = EVTimer(alignedTo: 1, offset: 1) { _ in } }
        await #expect(processExitsWith: .failure) { _ = EVTimer(alignedTo: 1, offset: -0.1) { _ in } }
    }

    @Test("frames per second at or below zero")
    func framesPerSecond() async {
        await #expect(processExitsWith: .failure) { _ = EVFrameTimer(framesPerSecond: 0) { _ in } }
    }

    @Test("a negative descriptor")
    func negativeDescriptor() async {
        await #expect(processExitsWith: .failure) { _ = try? EVSource(fileDescriptor: -1) { _ in } }
    }

    @Test("adding an invalidated timer")
    func invalidatedTimer() async {
        await #expect(processExitsWith: .failure) {
            let timer = EVTimer(interval: 1, repeats: false) { _ in }
            timer.invalidate()
            EVRunLoop(clock: EVVirtualClock()).add(timer, forMode: .default)
        }
    }

    @Test("adding an invalidated source")
    func invalidatedSource() async {
        await #expect(processExitsWith: .failure) {
            let source = EVSource { _ in }
            source.invalidate()
            EVRunLoop(clock: EVVirtualClock()).add(source, forMode: .default)
        }
    }

    @Test("a descriptor source on a virtual-clock loop")
    func descriptorOnVirtualLoop() async {
        await #expect(processExitsWith: .failure) {
            let source = try? EVSource(fileDescriptor: 0) { _ in }
            EVRunLoop(clock: EVVirtualClock()).add(source!, forMode: .default)
        }
    }
}
