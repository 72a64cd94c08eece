import Foundation
import RunLoopKit
import Testing

/// Nested runs, observers changed during notifications, and blocks for other and common
/// modes, run on CF and on both backends.
@Suite("Nested runs and blocks match CFRunLoop", .timeLimit(.minutes(10)))
struct NestedRunTests {
    static let ours: [LoopKind] = [.virtual, .libev, .polled]

    @Test("stop() inside a nested run stops only the nested run", arguments: ours)
    func stopInner(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(go)", "timer(stop)", "return(stopped)", "return(timedOut)"]) { loop in
            loop.addTimer("far", after: 100)
            loop.addTimer("keep", after: 100, mode: "tracking")
            loop.addTimer("stop", after: 0.02, mode: "tracking") { loop.stop() }
            loop.addTimer("go", after: 0.01) { loop.run("tracking", seconds: 5) }
            loop.run(seconds: 0.5)
        }
    }

    @Test("stop() after a nested run returns stops the outer run", arguments: ours)
    func stopOuterAfterInner(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(go)", "return(timedOut)", "return(stopped)"]) { loop in
            loop.addTimer("far", after: 100)
            loop.addTimer("keep", after: 100, mode: "tracking")
            loop.addTimer("go", after: 0.01) {
                loop.run("tracking", seconds: 0.02)
                loop.stop()
            }
            loop.run(seconds: 5)
        }
    }

    @Test("a stop requested before a nested run is kept for the outer run", arguments: ours)
    func stopSurvivesNestedRun(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(go)", "return(timedOut)", "return(stopped)"]) { loop in
            loop.addTimer("far", after: 100)
            loop.addTimer("keep", after: 100, mode: "tracking")
            loop.addTimer("go", after: 0.01) {
                loop.stop()
                loop.run("tracking", seconds: 0.02)
            }
            loop.run(seconds: 5)
        }
    }

    @Test("a nested run in the same mode, stopped from its own observer", arguments: ours)
    func nestedSameModeStopped(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(go)", "n@entry", "return(stopped)", "return(timedOut)"]) { loop in
            let nested = Once()
            loop.addObserver("n", .entry) { _ in loop.stop() }
            loop.removeObserver("n", mode: "default")
            loop.addTimer("far", after: 100)
            loop.addTimer("go", after: 0.01) {
                guard nested() else { return }
                loop.addObserver("n", .entry)
                loop.run(seconds: 5)
                loop.removeObserver("n", mode: "default")
            }
            loop.run(seconds: 0.5)
        }
    }

    @Test("a wake sent in a nested polling run's entry is consumed by that run", arguments: ours)
    func wakeConsumedByNestedPoll(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry", "o@beforeTimers", "o@beforeSources", "o@beforeWaiting", "n@entry",
                              "return(timedOut)", "o@afterWaiting", "o@exit", "return(timedOut)"]) { loop in
            let once = Once()
            loop.addObserver("o") { activity in
                if activity == .beforeWaiting, once() { loop.run("tracking", seconds: 0) }
            }
            loop.addObserver("n", .entry, mode: "tracking") { _ in loop.wakeUp() }
            loop.addTimer("keep", after: 100, mode: "tracking")
            loop.addTimer("far", after: 100)
            loop.run(seconds: passDeadline)
        }
    }

    @Test("an observer added during a notification with a lower order waits for the next one",
          arguments: ours)
    func observerAddedEarlierInOrder(kind: LoopKind) async {
        await checkAgainstCF(kind, ["b@beforeTimers", "source(s)", "a@beforeTimers", "b@beforeTimers", "return(stopped)"]) { loop in
            let once = Once()
            loop.addObserver("b", .beforeTimers, order: 5) { _ in
                if once() { loop.addObserver("a", .beforeTimers, order: 1) { _ in loop.stop() } }
            }
            loop.addSource("s")
            loop.signalSource("s")
            loop.run(seconds: 10)
        }
    }

    @Test("an observer that invalidates itself is called once", arguments: ours)
    func observerInvalidatesItself(kind: LoopKind) async {
        await checkAgainstCF(kind, ["a@beforeTimers", "source(s)", "return(timedOut)"]) { loop in
            loop.addObserver("a", .beforeTimers) { _ in loop.invalidateObserver("a") }
            loop.addSource("s")
            loop.signalSource("s")
            loop.run(seconds: 0.02)
        }
    }

    @Test("an observer removed from the running mode by another observer is still called this time",
          arguments: ours)
    func observerRemovedMidNotification(kind: LoopKind) async {
        await checkAgainstCF(kind, ["a@beforeWaiting", "b@beforeWaiting", "timer(t)", "a@beforeWaiting",
                              "return(stopped)"]) { loop in
            let once = Once()
            loop.addObserver("a", .beforeWaiting, order: 1) { _ in
                if once() { loop.removeObserver("b", mode: "default") } else { loop.stop() }
            }
            loop.addObserver("b", .beforeWaiting, order: 2)
            loop.addTimer("t", after: 0.01)
            loop.addTimer("far", after: 100)
            loop.run(seconds: 10)
        }
    }

    @Test("a block for two modes runs once, in whichever runs first", arguments: ours)
    func blockForTwoModes(kind: LoopKind) async {
        await checkAgainstCF(kind, ["block(b)", "return(timedOut)", "return(timedOut)"]) { loop in
            loop.addTimer("far", after: 100)
            loop.addTimer("keep", after: 100, mode: "other")
            loop.perform("b", modes: ["other", "default"])
            loop.run(seconds: 0)
            loop.run("other", seconds: 0)
        }
    }

    @Test("a block for the common modes runs in a mode made common later", arguments: ours)
    func blockForCommonModes(kind: LoopKind) async {
        await checkAgainstCF(kind, ["return(timedOut)", "block(b)", "return(timedOut)"]) { loop in
            loop.addTimer("keep", after: 100, mode: "tracking")
            loop.perform("b", modes: ["common"])
            loop.run("tracking", seconds: 0)
            loop.addCommonMode("tracking")
            loop.run("tracking", seconds: 0)
        }
    }

    @Test("a block queued for another mode keeps only that mode alive", arguments: ours)
    func blockForOtherModeOnly(kind: LoopKind) async {
        await checkAgainstCF(kind, ["return(finished)", "x@entry", "block(b)", "return(timedOut)"]) { loop in
            loop.addObserver("x", .entry, mode: "other")
            loop.perform("b", modes: ["other"])
            loop.run(seconds: 0.05)
            loop.run("other", seconds: 0.05)
        }
    }

    @Test("running a mode that was never created finishes at once", arguments: ours)
    func unknownMode(kind: LoopKind) async {
        await checkAgainstCF(kind, ["return(finished)"]) { loop in
            loop.addTimer("far", after: 100)
            loop.run("never-created", seconds: 1)
        }
    }
}
