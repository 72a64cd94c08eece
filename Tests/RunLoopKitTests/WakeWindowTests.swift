import Foundation
import RunLoopKit
import Testing

/// CF's wake window (`ignoreWakeUps`): a wake sent from the end of a wait to the top of the
/// next pass, or between runs, is dropped; one sent during a pass ends the coming wait at once;
/// a polling pass consumes a pending wake. Each scenario runs on CF and on both of our
/// backends; most end with a second run that would show a leftover wake as an extra pass.
@Suite("Wake window matches CFRunLoop", .timeLimit(.minutes(10)))
struct WakeWindowTests {
    static let ours: [LoopKind] = [.virtual, .libev, .polled]
    static let pass = ["o@beforeTimers", "o@beforeSources", "o@beforeWaiting", "o@afterWaiting"]
    static let pollingPass = ["o@beforeTimers", "o@beforeSources"]
    /// A second run of 0.05 s with nothing to do: one waiting pass, unless a wake was left over.
    static let cleanRun = ["o@entry"] + pass + ["o@exit", "return(timedOut)"]
    /// A second run (of `passDeadline`: its first pass must not outlast it) after a wake left over.
    static let runAfterLeftoverWake = ["o@entry"] + pass + pass + ["o@exit", "return(timedOut)"]

    /// An observer `o` on every activity that calls `action` the first time it sees `activity`.
    static func observe(_ loop: any LoopDriver, at activity: EVRunLoop.Activity, _ action: @escaping @Sendable () -> Void) {
        let once = Once()
        loop.addObserver("o") { seen in if seen == activity, once() { action() } }
        loop.addTimer("far", after: 100)
    }

    // MARK: stop()

    @Test("stop() from beforeTimers ends the coming wait at once", arguments: ours)
    func stopFromBeforeTimers(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["o@exit", "return(stopped)"] + Self.cleanRun) { loop in
            Self.observe(loop, at: .beforeTimers) { loop.stop() }
            loop.run(seconds: 1e10)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from beforeSources", arguments: ours)
    func stopFromBeforeSources(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["o@exit", "return(stopped)"] + Self.cleanRun) { loop in
            Self.observe(loop, at: .beforeSources) { loop.stop() }
            loop.run(seconds: 1e10)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from beforeWaiting leaves no wake behind", arguments: ours)
    func stopFromBeforeWaiting(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["o@exit", "return(stopped)"] + Self.cleanRun) { loop in
            Self.observe(loop, at: .beforeWaiting) { loop.stop() }
            loop.run(seconds: 1e10)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from afterWaiting: its wake falls in the window and is dropped", arguments: ours)
    func stopFromAfterWaiting(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["timer(t)", "o@exit", "return(stopped)"] + Self.cleanRun) { loop in
            Self.observe(loop, at: .afterWaiting) { loop.stop() }
            loop.addTimer("t", after: 0.01)
            loop.run(seconds: 1e10)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from a timer callout: its wake is dropped", arguments: ours)
    func stopFromTimer(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["timer(t)", "o@exit", "return(stopped)"] + Self.cleanRun) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.addTimer("t", after: 0.01) { loop.stop() }
            loop.run(seconds: 1e10)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from a block", arguments: ours)
    func stopFromBlock(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry", "o@beforeTimers", "o@beforeSources", "block(b)", "o@beforeWaiting",
                              "o@afterWaiting", "o@exit", "return(stopped)"] + Self.cleanRun) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.perform("b") { loop.stop() }
            loop.run(seconds: 1e10)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from a source handler: the polling pass consumes its wake", arguments: ours)
    func stopFromSource(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["source(s)", "o@exit", "return(stopped)"]
                       + Self.cleanRun) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.addSource("s") { loop.stop() }
            loop.signalSource("s")
            loop.run(seconds: 1e10)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from entry: the run stops at once, and its wake is left for the next run", arguments: ours)
    func stopFromEntry(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry", "o@exit", "return(stopped)"] + Self.runAfterLeftoverWake) { loop in
            Self.observe(loop, at: .entry) { loop.stop() }
            loop.run(seconds: 1e10)
            loop.run(seconds: passDeadline)
        }
    }

    @Test("stop() from exit is dropped, and so is its wake", arguments: ours)
    func stopFromExit(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["o@exit", "return(timedOut)"] + Self.cleanRun) { loop in
            Self.observe(loop, at: .exit) { loop.stop() }
            loop.run(seconds: 0.03)
            loop.run(seconds: 0.05)
        }
    }

    @Test("stop() from another thread, then a second run", arguments: ours)
    func stopFromAnotherThread(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["o@exit", "return(stopped)"] + Self.cleanRun) { loop in
            let waiting = DispatchSemaphore(value: 0)
            loop.addObserver("o") { activity in if activity == .beforeWaiting { waiting.signal() } }
            loop.addSource("keepAlive")
            Thread.detachNewThread {
                waiting.wait()  // the loop is about to wait: the stop must end that wait
                loop.stop()
            }
            loop.run(seconds: 1e10)
            loop.removeSource("keepAlive", mode: "default")
            loop.addTimer("far", after: 100)
            loop.run(seconds: 0.05)
        }
    }

    // MARK: wakeUp()

    @Test("wakeUp() from beforeTimers makes one extra pass", arguments: ours)
    func wakeFromBeforeTimers(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + Self.pass + ["o@exit", "return(timedOut)"]) { loop in
            Self.observe(loop, at: .beforeTimers) { loop.wakeUp() }
            loop.run(seconds: passDeadline)
        }
    }

    @Test("wakeUp() from beforeWaiting makes one extra pass", arguments: ours)
    func wakeFromBeforeWaiting(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + Self.pass + ["o@exit", "return(timedOut)"]) { loop in
            Self.observe(loop, at: .beforeWaiting) { loop.wakeUp() }
            loop.run(seconds: passDeadline)
        }
    }

    @Test("wakeUp() from afterWaiting is dropped", arguments: ours)
    func wakeFromAfterWaiting(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["timer(t)"] + Self.pass + ["o@exit", "return(timedOut)"]) { loop in
            Self.observe(loop, at: .afterWaiting) { loop.wakeUp() }
            loop.addTimer("t", after: 0.01)
            loop.run(seconds: passDeadline)
        }
    }

    @Test("wakeUp() from a timer callout is dropped", arguments: ours)
    func wakeFromTimer(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["timer(t)"] + Self.pass + ["o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.addTimer("t", after: 0.01) { loop.wakeUp() }
            loop.run(seconds: passDeadline)
        }
    }

    @Test("wakeUp() from a block makes one extra pass", arguments: ours)
    func wakeFromBlock(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry", "o@beforeTimers", "o@beforeSources", "block(b)", "o@beforeWaiting",
                              "o@afterWaiting"] + Self.pass + ["o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.perform("b") { loop.wakeUp() }
            loop.run(seconds: passDeadline)
        }
    }

    @Test("wakeUp() from a source handler is consumed by the polling pass", arguments: ours)
    func wakeFromSource(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["source(s)"] + Self.pass
                       + ["o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.addSource("s") { loop.wakeUp() }
            loop.signalSource("s")
            loop.run(seconds: passDeadline)
        }
    }

    @Test("wakeUp() from entry makes one extra pass", arguments: ours)
    func wakeFromEntry(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + Self.pass + ["o@exit", "return(timedOut)"]) { loop in
            Self.observe(loop, at: .entry) { loop.wakeUp() }
            loop.run(seconds: passDeadline)
        }
    }

    @Test("wakeUp() from exit is dropped", arguments: ours)
    func wakeFromExit(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["o@exit", "return(timedOut)"] + Self.cleanRun) { loop in
            Self.observe(loop, at: .exit) { loop.wakeUp() }
            loop.run(seconds: 0.03)
            loop.run(seconds: 0.05)
        }
    }

    @Test("wakeUp() between two runs is dropped", arguments: ours)
    func wakeBetweenRuns(kind: LoopKind) async {
        await checkAgainstCF(kind, Self.cleanRun + Self.cleanRun) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.run(seconds: 0.05)
            loop.wakeUp()
            loop.run(seconds: 0.05)
        }
    }

    @Test("wakeUp() before the loop ever ran is dropped", arguments: ours)
    func wakeBeforeFirstRun(kind: LoopKind) async {
        await checkAgainstCF(kind, Self.cleanRun) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.wakeUp()
            loop.run(seconds: 0.05)
        }
    }

    @Test("wakeUp() from another thread ends the wait", arguments: ours)
    func wakeFromAnotherThread(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["o@exit", "return(stopped)"]) { loop in
            let once = Once()
            let waiting = DispatchSemaphore(value: 0)
            loop.addObserver("o") { activity in
                if activity == .beforeWaiting { waiting.signal() }
                if activity == .afterWaiting, once() { loop.stop() }
            }
            loop.addSource("keepAlive")  // no deadline: only the wake can end the wait
            Thread.detachNewThread {
                waiting.wait()  // the loop is about to wait: the wake must end that wait
                loop.wakeUp()
            }
            loop.run(seconds: 1e10)
        }
    }

    // MARK: Polling

    @Test("a polling run consumes a wake sent during its pass", arguments: ours)
    func pollConsumesWake(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["o@exit", "return(timedOut)"] + Self.cleanRun) { loop in
            Self.observe(loop, at: .beforeTimers) { loop.wakeUp() }
            loop.run(seconds: 0)
            loop.run(seconds: 0.05)
        }
    }

    @Test("a negative timeout polls once", arguments: ours)
    func negativeTimeout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addTimer("far", after: 100)
            loop.run(seconds: -5)
        }
    }

    @Test("a zero timeout with a signalled source fires it in its one pass", arguments: ours)
    func zeroTimeoutWithSource(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pollingPass + ["source(s)", "o@exit", "return(timedOut)"]) { loop in
            loop.addObserver("o")
            loop.addSource("s")
            loop.signalSource("s")
            loop.run(seconds: 0)
        }
    }
}
