import Foundation
import RunLoopKit
import Testing

/// Timers as CF's `__CFRunLoopDoTimers` and `CFRunLoopTimerSetNextFireDate` treat them: fire
/// dates moved inside callouts, past dates clamped to now, invalidation and adds mid-pass,
/// and common modes. Each scenario runs on CF and on both backends.
@Suite("Timer scheduling matches CFRunLoop", .timeLimit(.minutes(10)))
struct TimerScenarioTests {
    static let ours: [LoopKind] = [.virtual, .libev]
    static let pass = ["o@beforeTimers", "o@beforeSources", "o@beforeWaiting", "o@afterWaiting"]

    @Test("a fire date set into the past inside the timer's own callout fires it in the next pass",
          arguments: ours)
    func pastDateInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["timer(t)"] + Self.pass + ["timer(t)"] + Self.pass
                       + ["o@exit", "return(timedOut)"]) { loop in
            let once = Once()
            loop.addObserver("o")
            loop.addTimer("t", after: 0.01, interval: 10) { if once() { loop.setTimerFireDate("t", after: -1) } }
            loop.run(seconds: 0.2)
        }
    }

    @Test("a fire date set later inside the timer's own callout replaces the interval", arguments: ours)
    func laterDateInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "return(timedOut)"]) { loop in
            let once = Once()
            loop.addTimer("far", after: 100)
            loop.addTimer("t", after: 0.01, interval: 0.02) { if once() { loop.setTimerFireDate("t", after: 0.3) } }
            loop.run(seconds: 0.15)  // the interval alone would fire six more times
        }
    }

    @Test("a fire date set earlier than the interval inside the callout is kept", arguments: ours)
    func earlierDateInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "timer(t)", "return(timedOut)"]) { loop in
            let once = Once()
            loop.addTimer("far", after: 100)
            loop.addTimer("t", after: 0.01, interval: 100) { if once() { loop.setTimerFireDate("t", after: 0.03) } }
            loop.run(seconds: 0.2)
        }
    }

    @Test("a one-shot timer that sets its fire date in its callout is still invalidated", arguments: ours)
    func oneShotSetsDate(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "return(finished)"]) { loop in
            loop.addTimer("t", after: 0.01) { loop.setTimerFireDate("t", after: 0.01) }
            loop.run(seconds: 0.2)
        }
    }

    @Test("a fire date moved into the past by an observer fires at the next wake", arguments: ours)
    func pastDateFromObserver(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["timer(far)", "o@exit", "return(finished)"]) { loop in
            let once = Once()
            loop.addObserver("o") { activity in
                if activity == .beforeWaiting, once() { loop.setTimerFireDate("far", after: -5) }
            }
            loop.addTimer("far", after: 100)
            loop.run(seconds: 5)
        }
    }

    @Test("a timer invalidated by an earlier timer of the same pass does not fire", arguments: ours)
    func invalidatedBeforeItsTurn(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(a)", "return(timedOut)"]) { loop in
            loop.addTimer("far", after: 100)
            loop.addTimer("a", after: 0.01) { loop.invalidateTimer("b") }
            loop.addTimer("b", after: 0.011)
            Thread.sleep(forTimeInterval: 0.03)  // both are due at the first wake
            loop.run(seconds: 0.05)
        }
    }

    @Test("due timers fire in fire-date order", arguments: ours)
    func dueInOrder(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(a)", "timer(b)", "timer(c)", "return(finished)"]) { loop in
            loop.addTimer("c", after: 0.012)
            loop.addTimer("a", after: 0.010)
            loop.addTimer("b", after: 0.011)
            Thread.sleep(forTimeInterval: 0.03)
            loop.run(seconds: 1)
        }
    }

    @Test("a timer invalidated in its own callout leaves the mode empty", arguments: ours)
    func invalidatedInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "return(finished)"]) { loop in
            loop.addTimer("t", after: 0.01, interval: 0.01) { loop.invalidateTimer("t") }
            loop.run(seconds: 1)
        }
    }

    @Test("a timer added to .common before a mode is made common fires in that mode", arguments: ours)
    func commonBeforeAddCommonMode(kind: LoopKind) async {
        await checkAgainstCF(kind, ["return(finished)", "x@entry", "timer(t)", "return(finished)"]) { loop in
            loop.addTimer("t", after: 0.01, mode: "common")
            loop.addObserver("x", .entry, mode: "tracking")
            loop.run("tracking", seconds: 0.1)  // not common yet: nothing to run
            loop.addCommonMode("tracking")
            loop.run("tracking", seconds: 1)
        }
    }

    @Test("a timer in another mode does not keep this mode alive", arguments: ours)
    func timerInOtherMode(kind: LoopKind) async {
        await checkAgainstCF(kind, ["return(finished)"]) { loop in
            loop.addTimer("t", after: 0.01, mode: "other")
            loop.run(seconds: 1)
        }
    }

    @Test("a repeating timer skips the fires missed while another mode ran", arguments: ours)
    func skipsMissedFires(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "return(timedOut)", "return(timedOut)", "timer(t)", "return(timedOut)"]) { loop in
            loop.addTimer("t", after: 0.01, interval: 0.2)
            loop.addTimer("keep", after: 100, mode: "other")
            loop.run(seconds: 0.03)          // fires at 0.01
            loop.run("other", seconds: 0.5)  // 0.21 and 0.41 pass unserved
            loop.run(seconds: 0.05)          // one catch-up fire at 0.53, not two; the next is 0.61
        }
    }
}
