import Foundation
import RunLoopKit
import Testing

/// Bad values stop the program with a message naming the call and the value, on standard
/// error, in every build configuration.
@Suite("Bad input")
struct BadInputTests {
    @Test("a NaN interval")
    func nanInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(interval: .nan, repeats: true) { _ in }
        }
        #expect(standardError(result).contains("EVTimer(interval:): interval nan is not finite"))
    }

    @Test("an infinite tolerance")
    func infiniteTolerance() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(interval: 1, repeats: true, tolerance: .infinity) { _ in }
        }
        #expect(standardError(result).contains("EVTimer(interval:): tolerance inf is not finite"))
    }

    @Test("a negative tolerance, set after creation")
    func negativeTolerance() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVTimer(interval: 1, repeats: true) { _ in }.tolerance = -0.5
        }
        #expect(standardError(result).contains("EVTimer.tolerance: tolerance -0.5 s is negative"))
    }

    @Test("a NaN fire date")
    func nanFireDate() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(fireAt: Date(timeIntervalSince1970: .nan)) { _ in }
        }
        #expect(standardError(result).contains("EVTimer(fireAt:): fireAt nan is not finite"))
    }

    @Test("an aligned offset outside [0, interval)")
    func alignedOffset() async {
        let high = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(alignedTo: 1, offset: 1) { _ in }
        }
        #expect(standardError(high).contains("EVTimer(alignedTo:offset:): offset 1.0 must be in [0, 1.0)"))
        let negative = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(alignedTo: 1, offset: -0.1) { _ in }
        }
        #expect(standardError(negative).contains("EVTimer(alignedTo:offset:): offset -0.1 must be in [0, 1.0)"))
    }

    @Test("an aligned interval too large or too small for the clock")
    func alignedInterval() async {
        let huge = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(alignedTo: 1e300) { _ in }
        }
        #expect(standardError(huge).contains("EVTimer(alignedTo:offset:): interval 1e+300"))
        let large = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(alignedTo: 1e10) { _ in }
        }
        #expect(standardError(large).contains("EVTimer(alignedTo:offset:): interval 10000000000.0"))
        let tiny = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVTimer(alignedTo: 1e-12) { _ in }
        }
        #expect(standardError(tiny).contains("EVTimer(alignedTo:offset:): interval 1e-12"))
    }

    @Test("frames per second at or below zero, or beyond the clock's resolution")
    func framesPerSecond() async {
        let zero = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVFrameTimer(framesPerSecond: 0) { _ in }
        }
        #expect(standardError(zero).contains("EVFrameTimer(framesPerSecond:): framesPerSecond 0.0"))
        let huge = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVFrameTimer(framesPerSecond: 1e300) { _ in }
        }
        #expect(standardError(huge).contains("EVFrameTimer(framesPerSecond:): framesPerSecond 1e+300"))
        let tiny = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVFrameTimer(framesPerSecond: 1e-300) { _ in }
        }
        #expect(standardError(tiny).contains("EVFrameTimer(framesPerSecond:): framesPerSecond 1e-300"))
    }

    @Test("a virtual wall clock set to NaN or beyond the clock's range")
    func virtualWallClock() async {
        let setNaN = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVVirtualClock().setWallClock(to: Date(timeIntervalSince1970: .nan))
        }
        #expect(standardError(setNaN).contains("EVVirtualClock.setWallClock(to:): date nan"))
        let setHuge = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVVirtualClock().setWallClock(to: Date(timeIntervalSince1970: 1e300))
        }
        #expect(standardError(setHuge).contains("EVVirtualClock.setWallClock(to:): date 1e+300"))
        let startNaN = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVVirtualClock(wallStart: Date(timeIntervalSince1970: .nan))
        }
        #expect(standardError(startNaN).contains("EVVirtualClock(start:wallStart:bootPhase:): wallStart nan"))
        let startHuge = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVVirtualClock(wallStart: Date(timeIntervalSince1970: 1e300))
        }
        #expect(standardError(startHuge).contains("EVVirtualClock(start:wallStart:bootPhase:): wallStart 1e+300"))
    }

    @Test("a virtual clock starting at Int64.min or near Int64.max")
    func virtualStart() async {
        let low = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVVirtualClock(start: EVRunLoop.Instant(nanoseconds: .min))
        }
        #expect(standardError(low).contains("EVVirtualClock(start:wallStart:bootPhase:): start -9223372036854775808 ns"))
        let high = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVVirtualClock(start: EVRunLoop.Instant(nanoseconds: .max - 1))
        }
        #expect(standardError(high).contains("EVVirtualClock(start:wallStart:bootPhase:): start 9223372036854775806 ns"))
    }

    @Test("signal sources for SIGKILL, SIGSTOP and the C library's reserved 32")
    func uncatchableSignals() async {
        let kill = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVSource(signal: SIGKILL) { _ in }
        }
        #expect(standardError(kill).contains("EVSource(signal:): signal 9 cannot be caught"))
        let stop = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVSource(signal: SIGSTOP) { _ in }
        }
        #expect(standardError(stop).contains("EVSource(signal:): signal 19 cannot be caught"))
        let reserved = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVSource(signal: 32) { _ in }
        }
        #expect(standardError(reserved).contains("EVSource(signal:): signal 32 cannot be caught"))
    }

    @Test("perform with no modes")
    func performNoModes() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVRunLoop(clock: EVVirtualClock()).perform(inModes: []) {}
        }
        #expect(standardError(result).contains("EVRunLoop.perform(inModes:label:_:): modes is empty"))
    }

    @Test("an observer with no activities")
    func observerNoActivities() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EVObserver(activities: []) { _, _ in }
        }
        #expect(standardError(result).contains("EVObserver(activities:): activities is empty"))
    }

    @Test("a negative descriptor")
    func negativeDescriptor() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try? EVSource(fileDescriptor: -1) { _ in }
        }
        #expect(standardError(result).contains("EVSource(fileDescriptor:): file descriptor -1 is negative"))
    }

    @Test("adding an invalidated timer")
    func invalidatedTimer() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let timer = EVTimer(interval: 1, repeats: false, label: "t") { _ in }
            timer.invalidate()
            EVRunLoop(clock: EVVirtualClock()).add(timer, forMode: .default)
        }
        #expect(standardError(result).contains("EVRunLoop.add(_:forMode:): timer t is invalidated"))
    }

    @Test("adding an invalidated source")
    func invalidatedSource() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let source = EVSource(label: "s") { _ in }
            source.invalidate()
            EVRunLoop(clock: EVVirtualClock()).add(source, forMode: .default)
        }
        #expect(standardError(result).contains("EVRunLoop.add(_:forMode:): source s is invalidated"))
    }

    @Test("a descriptor source on a virtual-clock loop")
    func descriptorOnVirtualLoop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let source = try? EVSource(fileDescriptor: 0) { _ in }
            EVRunLoop(clock: EVVirtualClock()).add(source!, forMode: .default)
        }
        #expect(standardError(result).contains("sources need the real loop, not an EVVirtualClock loop"))
    }
}
