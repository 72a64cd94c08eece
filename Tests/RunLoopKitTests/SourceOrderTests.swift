import Foundation
import RunLoopKit
import Testing

/// Manual sources as CF's `__CFRunLoopDoSources0` fires them: the signalled sources are
/// collected before any handler runs, sorted by order and then by signal time; each is
/// fired if it is still signalled and valid. Each scenario runs on CF and on both backends.
@Suite("Manual sources match CFRunLoop", .timeLimit(.minutes(10)))
struct SourceOrderTests {
    static let ours: [LoopKind] = [.virtual, .libev, .polled]
    static let waitingPass = ["o@beforeTimers", "o@beforeSources", "o@beforeWaiting", "o@afterWaiting"]
    static let pollingPass = ["o@beforeTimers", "o@beforeSources"]
    static let timeout = waitingPass + ["o@exit", "return(timedOut)"]

    @Test("a source signalled by an earlier source's handler fires in the next pass", arguments: ours)
    func chainToHigherOrder(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["source(s1)"] + Self.pollingPass + ["source(s2)"]
                       + Self.timeout) { loop in
            loop.addObserver("o")
            loop.addSource("s2", order: 2)
            loop.addSource("s1", order: 1) { loop.signalSource("s2") }
            loop.signalSource("s1")
            loop.run(seconds: passDeadline)
        }
    }

    @Test("a source signalled by a later source's handler fires in the next pass", arguments: ours)
    func chainToLowerOrder(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["source(s2)"] + Self.pollingPass + ["source(s1)"]
                       + Self.timeout) { loop in
            loop.addObserver("o")
            loop.addSource("s1", order: 1)
            loop.addSource("s2", order: 2) { loop.signalSource("s1") }
            loop.signalSource("s2")
            loop.run(seconds: passDeadline)
        }
    }

    @Test("equal orders fire by signal time, earliest first", arguments: ours)
    func tiesBySignalTime(kind: LoopKind) async {
        await checkAgainstCF(kind, ["source(c)", "source(a)", "source(b)", "return(timedOut)"]) { loop in
            loop.addSource("a")
            loop.addSource("b")
            loop.addSource("c")
            loop.signalSource("c")
            loop.signalSource("a")
            loop.signalSource("b")
            loop.run(seconds: 0)
        }
    }

    @Test("a source signalled twice keeps its first signal time", arguments: ours)
    func resignalKeepsFirstTime(kind: LoopKind) async {
        await checkAgainstCF(kind, ["source(a)", "source(b)", "return(timedOut)"]) { loop in
            loop.addSource("a")
            loop.addSource("b")
            loop.signalSource("a")
            loop.signalSource("b")
            loop.signalSource("a")
            loop.run(seconds: 0)
        }
    }

    @Test("order wins over signal time", arguments: ours)
    func orderBeforeTime(kind: LoopKind) async {
        await checkAgainstCF(kind, ["source(low)", "source(high)", "return(timedOut)"]) { loop in
            loop.addSource("high", order: 5)
            loop.addSource("low", order: -5)
            loop.signalSource("high")
            loop.signalSource("low")
            loop.run(seconds: 0)
        }
    }

    @Test("a source invalidated by an earlier handler in the same pass does not fire", arguments: ours)
    func invalidatedBeforeItsTurn(kind: LoopKind) async {
        await checkAgainstCF(kind, ["source(s1)", "return(timedOut)"]) { loop in
            loop.addSource("s1", order: 1) { loop.invalidateSource("s2") }
            loop.addSource("s2", order: 2)
            loop.signalSource("s1")
            loop.signalSource("s2")
            loop.run(seconds: 0)
        }
    }

    @Test("a source removed from the mode by an earlier handler still fires in that pass", arguments: ours)
    func removedBeforeItsTurn(kind: LoopKind) async {
        await checkAgainstCF(kind, ["source(s1)", "source(s2)", "return(timedOut)"]) { loop in
            loop.addSource("keep", order: 0)
            loop.addSource("s1", order: 1) { loop.removeSource("s2", mode: "default") }
            loop.addSource("s2", order: 2)
            loop.signalSource("s1")
            loop.signalSource("s2")
            loop.run(seconds: 0)
        }
    }

    @Test("a source signalled in beforeSources fires in that pass", arguments: ours)
    func signalledInBeforeSources(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["source(s)"] + Self.timeout) { loop in
            let once = Once()
            loop.addObserver("o") { activity in if activity == .beforeSources, once() { loop.signalSource("s") } }
            loop.addSource("s")
            loop.run(seconds: passDeadline)
        }
    }

    @Test("a source signalled by a block fires in that pass, and blocks run again", arguments: ours)
    func signalledByBlock(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["block(b1)", "source(s)", "block(b2)"]
                       + Self.timeout) { loop in
            loop.addObserver("o")
            loop.addSource("s") { loop.perform("b2") }
            loop.perform("b1") { loop.signalSource("s") }
            loop.run(seconds: passDeadline)
        }
    }

    @Test("a source signalled by a timer fires in the next pass", arguments: ours)
    func signalledByTimer(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.waitingPass + ["timer(t)"] + Self.pollingPass
                       + ["source(s)", "o@exit", "return(stopped)"]) { loop in
            loop.addObserver("o")
            loop.addSource("s") { loop.stop() }
            loop.addTimer("t", after: 0.01) { loop.signalSource("s") }
            loop.run(seconds: 5)
        }
    }

    @Test("returnAfterSourceHandled with a chain returns after the first handler", arguments: ours)
    func returnAfterChain(kind: LoopKind) async {
        await checkAgainstCF(kind, ["source(s1)", "return(handledSource)", "source(s2)", "return(handledSource)"]) { loop in
            loop.addSource("s1", order: 1) { loop.signalSource("s2") }
            loop.addSource("s2", order: 2)
            loop.signalSource("s1")
            loop.run(seconds: 1, returnAfterSourceHandled: true)
            loop.run(seconds: 1, returnAfterSourceHandled: true)
        }
    }

    @Test("a source signalled from another thread with wakeUp() fires after the wait", arguments: ours)
    func signalledFromAnotherThread(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.waitingPass + Self.pollingPass + ["source(s)", "o@exit",
                              "return(handledSource)"]) { loop in
            let waiting = DispatchSemaphore(value: 0)
            loop.addObserver("o") { activity in if activity == .beforeWaiting { waiting.signal() } }
            loop.addSource("s")
            Thread.detachNewThread {
                waiting.wait()  // the loop is about to wait: the wake must end that wait
                loop.signalSource("s")
                loop.wakeUp()
            }
            loop.run(seconds: 1e10, returnAfterSourceHandled: true)
        }
    }
}
