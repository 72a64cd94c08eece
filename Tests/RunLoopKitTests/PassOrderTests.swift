import Foundation
import RunLoopKit
import Testing

/// The pass order, scenario by scenario: each scenario runs on RunLoopKit (virtual clock and
/// libev) and on CoreFoundation's CFRunLoop, and the logs must be equal — and equal to the
/// sequence written out here, so a reader sees what CF does.
@Suite("Pass order matches CFRunLoop", .timeLimit(.minutes(10)))
struct PassOrderTests {
    static let ours: [LoopKind] = [.virtual, .libev, .polled]

    func check(_ kind: LoopKind, _ expected: [String],
               _ scenario: @escaping @Sendable (any LoopDriver) -> Void,
               sourceLocation: SourceLocation = #_sourceLocation) async {
        await checkAgainstCF(kind, expected, scenario, sourceLocation: sourceLocation)
    }

    static let wholeWait = ["o@beforeTimers", "o@beforeSources", "o@beforeWaiting", "o@afterWaiting"]

    @Test("an empty mode returns finished with no callout", arguments: ours)
    func emptyMode(kind: LoopKind) async {
        await check(kind, ["return(finished)"]) { loop in
            loop.addObserver("o")
            loop.run(seconds: 0.05)
        }
    }

    @Test("a run that times out", arguments: ours)
    func timesOut(kind: LoopKind) async {
        await check(kind, ["o@entry"] + Self.wholeWait + ["o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.run(seconds: 0.03)
        }
    }

    @Test("a deadline already past runs one polling pass", arguments: ours)
    func zeroTimeout(kind: LoopKind) async {
        await check(kind, ["o@entry", "o@beforeTimers", "o@beforeSources", "o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.run(seconds: 0)
        }
    }

    @Test("a one-shot timer fires, then the mode is empty", arguments: ours)
    func oneShotTimerFinishes(kind: LoopKind) async {
        await check(kind, ["o@entry"] + Self.wholeWait + ["timer(t)", "o@exit", "return(finished)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("t", after: 0.01)
            loop.run(seconds: 5)
        }
    }

    @Test("stop() from a callout ends the run after the pass", arguments: ours)
    func stopFromCallout(kind: LoopKind) async {
        await check(kind, ["o@entry"] + Self.wholeWait + ["timer(t)", "o@exit", "return(stopped)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.addTimer("t", after: 0.01) { loop.stop() }
            loop.run(seconds: 5)
        }
    }

    @Test("stop() from an observer before waiting wakes the loop at once", arguments: ours)
    func stopBeforeWaiting(kind: LoopKind) async {
        await check(kind, ["o@entry"] + Self.wholeWait + ["o@exit", "return(stopped)"]) { loop in
            loop.addObserver("o") { activity in if activity == .beforeWaiting { loop.stop() } }
            loop.addTimer("far", after: 100)
            loop.run(seconds: 1e10)
        }
    }

    @Test("stop() from another thread", arguments: ours)
    func stopFromAnotherThread(kind: LoopKind) async {
        await check(kind, ["o@entry"] + Self.wholeWait + ["o@exit", "return(stopped)"]) { loop in
            let waiting = DispatchSemaphore(value: 0)
            loop.addObserver("o") { activity in if activity == .beforeWaiting { waiting.signal() } }
            loop.addSource("keepAlive")
            Thread.detachNewThread {
                waiting.wait()  // the loop is about to wait: the stop must end that wait
                loop.stop()
            }
            loop.run(seconds: 1e10)
        }
    }

    @Test("a stop requested while no run is in progress is dropped, as CF drops it", arguments: ours)
    func stopBeforeRun(kind: LoopKind) async {
        await check(kind, ["o@entry"] + Self.wholeWait + ["o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.stop()
            loop.run(seconds: 0.05)
        }
    }

    @Test("a performed block runs after beforeSources and keeps the mode alive", arguments: ours)
    func performBlock(kind: LoopKind) async {
        await check(kind, ["o@entry", "o@beforeTimers", "o@beforeSources", "block(b)", "o@beforeWaiting",
                     "o@afterWaiting", "o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.perform("b")
            loop.run(seconds: 0.03)
        }
    }

    @Test("blocks of other modes wait; blocks queued by a block wait for a later pass", arguments: ours)
    func blocksPerMode(kind: LoopKind) async {
        await check(kind, ["block(b1)", "block(b3)", "return(timedOut)", "x@entry", "block(b2)", "return(timedOut)",
                     "return(finished)"]) { loop in
            loop.addObserver("x", .entry, mode: "other")  // creates the mode, as CF needs
            loop.perform("b1") { loop.perform("b3") }
            loop.perform("b2", modes: ["other"])
            loop.run(seconds: passDeadline)
            loop.run("other", seconds: 0)
            loop.run("other", seconds: 0)
        }
    }

    @Test("blocks of another mode keep their order when the blocks between them run", arguments: ours)
    func keptBlocksInOrder(kind: LoopKind) async {
        await check(kind, ["block(b2)", "block(b5)", "return(timedOut)", "x@entry", "block(b1)", "block(b3)", "block(b4)",
                           "return(timedOut)"]) { loop in
            loop.addObserver("x", .entry, mode: "other")
            loop.perform("b1", modes: ["other"])
            loop.perform("b2")
            loop.perform("b3", modes: ["other"])
            loop.perform("b4", modes: ["other"])
            loop.perform("b5")
            loop.run(seconds: passDeadline)
            loop.run("other", seconds: 0)
        }
    }

    @Test("returnAfterSourceHandled returns after the first source, without waiting", arguments: ours)
    func returnAfterSourceHandled(kind: LoopKind) async {
        await check(kind, ["o@entry", "o@beforeTimers", "o@beforeSources", "source(s1)", "o@exit",
                     "return(handledSource)"]) { loop in
            loop.addObserver("o")
            loop.addSource("s1", order: 1)
            loop.addSource("s2", order: 2)
            loop.signalSource("s2")
            loop.signalSource("s1")
            loop.run(seconds: 1, returnAfterSourceHandled: true)
        }
    }

    @Test("signalled sources fire in order and make the pass poll", arguments: ours)
    func sourcesPoll(kind: LoopKind) async {
        await check(kind, ["o@entry", "o@beforeTimers", "o@beforeSources", "source(s1)", "source(s2)"]
              + Self.wholeWait + ["o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addSource("s2", order: 2)
            loop.addSource("s1", order: 1)
            loop.signalSource("s2")
            loop.signalSource("s1")
            loop.run(seconds: passDeadline)
        }
    }

    @Test("a nested run in another mode, with observers in both modes", arguments: ours)
    func nestedRun(kind: LoopKind) async {
        let inner = ["t@entry", "t@beforeTimers", "t@beforeSources", "t@beforeWaiting", "t@afterWaiting",
                     "t@exit", "return(timedOut)"]
        await check(kind, ["d@entry", "d@beforeTimers", "d@beforeSources", "d@beforeWaiting", "d@afterWaiting",
                     "timer(go)"] + inner + ["d@exit", "return(finished)"]) { loop in
            loop.addObserver("d")
            loop.addObserver("t", mode: "tracking")
            loop.addTimer("keepTracking", after: 100, mode: "tracking")
            loop.addTimer("go", after: 0.01) { loop.run("tracking", seconds: 0.02) }
            loop.run(seconds: 5)
        }
    }

    @Test("a nested run in the same mode skips the observer whose callout runs it", arguments: ours)
    func nestedSameMode(kind: LoopKind) async {
        await check(kind, ["p@entry", "o@beforeTimers", "o@beforeWaiting", "p@entry", "p@exit", "return(timedOut)",
                     "p@exit", "return(timedOut)"]) { loop in
            let nested = Recorder()
            loop.addObserver("p", [.entry, .exit])
            loop.addObserver("o", [.beforeTimers, .beforeWaiting]) { activity in
                guard activity == .beforeWaiting, nested.count == 0 else { return }
                nested.append("ran")
                loop.run(seconds: 0)
            }
            loop.addTimer("far", after: 100)
            loop.run(seconds: passDeadline)
        }
    }

    @Test("an observer added to .common sees a mode once it is made common", arguments: ours)
    func commonModes(kind: LoopKind) async {
        await check(kind, ["return(timedOut)", "c@entry", "c@exit", "return(timedOut)"]) { loop in
            loop.addObserver("c", [.entry, .exit], mode: "common")
            loop.addTimer("keep", after: 100, mode: "tracking")
            loop.run("tracking", seconds: 0)
            loop.addCommonMode("tracking")
            loop.run("tracking", seconds: 0)
        }
    }

    @Test("observers of equal order run in the order they were added", arguments: ours)
    func equalOrders(kind: LoopKind) async {
        await check(kind, ["early@entry", "a@entry", "b@entry", "c@entry", "late@entry", "return(timedOut)"]) { loop in
            loop.addObserver("a", .entry, order: 0)
            loop.addObserver("late", .entry, order: 5)
            loop.addObserver("b", .entry, order: 0)
            loop.addObserver("early", .entry, order: -2_000_000)
            loop.addObserver("c", .entry, order: 0)
            loop.addTimer("far", after: 100)
            loop.run(seconds: 0)
        }
    }

    @Test("a non-repeating observer is called once", arguments: ours)
    func nonRepeating(kind: LoopKind) async {
        await check(kind, ["once@beforeTimers", "every@beforeTimers", "source(s)", "every@beforeTimers",
                     "return(timedOut)"]) { loop in
            loop.addObserver("once", .beforeTimers, repeats: false)
            loop.addObserver("every", .beforeTimers)
            loop.addSource("s")
            loop.signalSource("s")  // one polling pass, then a waiting one
            loop.run(seconds: passDeadline)
        }
    }

    @Test("observers added, removed and invalidated during a callout", arguments: ours)
    func mutationDuringCallout(kind: LoopKind) async {
        await check(kind, ["a@beforeTimers", "b@beforeTimers", "source(s)", "a@beforeTimers", "c@beforeTimers",
                     "return(timedOut)"]) { loop in
            loop.addObserver("a", .beforeTimers, order: 0) { _ in
                loop.removeObserver("b", mode: "default")
                loop.invalidateObserver("d")
                loop.addObserver("c", .beforeTimers, order: 2)
            }
            loop.addObserver("b", .beforeTimers, order: 1)
            loop.addObserver("d", .beforeTimers, order: 3)
            loop.addSource("s")
            loop.signalSource("s")
            loop.run(seconds: passDeadline)
        }
    }
}
