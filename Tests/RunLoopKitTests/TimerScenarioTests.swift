import Foundation
import RunLoopKit
import Testing

/// Timers as CF's `__CFRunLoopDoTimers` and `CFRunLoopTimerSetNextFireDate` treat them: fire
/// dates moved inside callouts, past dates clamped to now, invalidation and adds mid-pass,
/// and common modes. Each scenario runs on CF and on both backends.
///
/// On the real loops a thread may stall for a fifth of a second at any point, so no scenario
/// lets a run's deadline fall between two of its timers: a run ends by a `stop()` from a
/// callout, by its mode running empty, or by a deadline well away from every fire; timers
/// whose order the trace shows are ordered by their fire dates, which hold however late the
/// thread runs.
@Suite("Timer scheduling matches CFRunLoop", .timeLimit(.minutes(10)))
struct TimerScenarioTests {
    static let ours: [LoopKind] = [.virtual, .libev, .polled]
    static let pass = ["o@beforeTimers", "o@beforeSources", "o@beforeWaiting", "o@afterWaiting"]

    @Test("a fire date set into the past inside the timer's own callout fires it in the next pass",
          arguments: ours)
    func pastDateInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["o@entry"] + Self.pass + ["timer(t)"] + Self.pass + ["timer(t)"]
                       + ["o@exit", "return(stopped)"]) { loop in
            let once = Once()
            loop.addObserver("o")
            loop.addTimer("t", after: 0.01, interval: 10) {
                if once() { loop.setTimerFireDate("t", after: -1) } else { loop.stop() }
            }
            loop.run(seconds: 9)  // the interval alone would fire next at 10 s
        }
    }

    @Test("a fire date set later inside the timer's own callout replaces the interval", arguments: ours)
    func laterDateInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "timer(stop)", "return(stopped)"]) { loop in
            let once = Once()
            loop.addTimer("far", after: 100)
            loop.addTimer("t", after: 0.01, interval: 0.02) { if once() { loop.setTimerFireDate("t", after: 100) } }
            loop.addTimer("stop", after: 0.15) { loop.stop() }  // the interval alone would fire six times first
            loop.run(seconds: 10)
        }
    }

    @Test("a fire date set earlier than the interval inside the callout is kept", arguments: ours)
    func earlierDateInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "timer(t)", "return(stopped)"]) { loop in
            let once = Once()
            loop.addTimer("far", after: 100)
            loop.addTimer("t", after: 0.01, interval: 100) {
                if once() { loop.setTimerFireDate("t", after: 0.03) } else { loop.stop() }
            }
            loop.run(seconds: 10)  // the interval alone would fire next at 100 s
        }
    }

    @Test("a one-shot timer that sets its fire date in its callout is still invalidated", arguments: ours)
    func oneShotSetsDate(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "return(finished)"]) { loop in
            loop.addTimer("t", after: 0.01) { loop.setTimerFireDate("t", after: 0.01) }
            loop.run(seconds: 10)  // a timer left in the mode would fire at once, then time out
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
            // Each date is relative to its add, so a stall between adds moves the later adds'
            // dates later: c, added first, is due well after a and b; b, added after a, after a.
            loop.addTimer("c", after: 0.5)
            loop.addTimer("a", after: 0.010)
            loop.addTimer("b", after: 0.011)
            Thread.sleep(forTimeInterval: 0.55)  // all three are due at the first wake
            loop.run(seconds: passDeadline)
        }
    }

    @Test("a timer invalidated in its own callout leaves the mode empty", arguments: ours)
    func invalidatedInOwnCallout(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "return(finished)"]) { loop in
            loop.addTimer("t", after: 0.01, interval: 0.01) { loop.invalidateTimer("t") }
            loop.run(seconds: passDeadline)
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
            loop.run(seconds: passDeadline)
        }
    }

    @Test("a repeating timer skips the fires missed while another mode ran", arguments: ours)
    func skipsMissedFires(kind: LoopKind) async {
        await checkAgainstCF(kind, ["timer(t)", "return(stopped)", "return(timedOut)", "timer(t)", "timer(s)",
                                    "return(stopped)", "next fire on the grid"]) { loop in
            let interval = 0.2
            let first = Once()
            loop.addTimer("t", after: 0.01, interval: interval) { if first() { loop.stop() } }
            let grid = loop.nextFireDate("t")
            loop.addTimer("keep", after: 100, mode: "other")
            loop.run(seconds: 10)            // fires at 0.01, and stops
            loop.run("other", seconds: 0.5)  // 0.21 and 0.41 (at least) pass unserved
            // Due after t's missed date: runs right after t's one catch-up fire, in its pass.
            loop.addTimer("s", after: 0) { loop.stop() }
            let before = loop.wallNow()
            loop.run(seconds: 10)
            // The catch-up fire skipped the missed dates: the next is the grid's first date
            // after the fire, so after the run began and at most an interval before it ended.
            let next = loop.nextFireDate("t")
            let steps = (next - grid) / interval
            let onGrid = abs(steps - steps.rounded()) * interval < 0.001
            let inTime = next > before && next - interval <= loop.wallNow()
            loop.recorder.append(onGrid && inTime ? "next fire on the grid"
                                 : "next fire \(next - before) s after the run began, \(steps) intervals on")
        }
    }
}
