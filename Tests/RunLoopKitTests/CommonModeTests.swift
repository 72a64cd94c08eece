import RunLoopKit
import Testing

@Suite("Common modes", .timeLimit(.minutes(10)))
struct CommonModeTests {
    @Test("making a mode common creates it only when .common holds items, as CF does")
    func addCommonModeCreatesTheModeOnlyWithItems() {
        let modes = onFreshThread { () -> [Set<String>] in
            let loop = EVRunLoop(clock: EVVirtualClock())
            let tracking = EVRunLoop.Mode("tracking")
            let other = EVRunLoop.Mode("other")
            loop.addCommonMode(tracking)
            let before = Set(loop.allModes.map(\.rawValue))
            loop.add(EVTimer(interval: 1, repeats: false) { _ in }, forMode: .common)
            loop.addCommonMode(other)
            let after = Set(loop.allModes.map(\.rawValue))
            return [before, after]
        }
        #expect(modes == [["kCFRunLoopDefaultMode"], ["kCFRunLoopDefaultMode", "tracking", "other"]])
    }
}

@Suite("Loop lifetime", .timeLimit(.minutes(10)))
struct LoopLifetimeTests {
    @Test("a loop released while a timer is in several of its modes")
    func releaseWithATimerInSeveralModes() {
        let released = onFreshThread { () -> Int in
            var count = 0
            for _ in 0..<200 {
                let loop = EVRunLoop(clock: EVVirtualClock())
                for name in ["a", "b", "c"] { loop.addCommonMode(EVRunLoop.Mode(name)) }
                loop.add(EVTimer(interval: 1, repeats: false) { _ in }, forMode: .common)
                count += 1
            }
            return count
        }
        #expect(released == 200)
    }
}
