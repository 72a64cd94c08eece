import Foundation
import RunLoopKit
import Testing

/// What other threads hand a loop goes through its inbox, which wakes the loop once per
/// drain: the first push after a drain sends the wake, later ones ride on it. These traces
/// show that no push is left waiting for a later wake, wherever in the pass it lands. The
/// virtual backend keeps a wake sent while the loop is awake, so a lost one shows as the
/// clock advancing to the timer before the blocks run.
@Suite("Inbox wakes")
struct InboxTests {
    /// Performs each of `labels` on `loop` from another thread, one after the other, and
    /// returns once they are all queued.
    static func performFromAnotherThread(_ loop: EVRunLoop, _ labels: [String], then: (@Sendable () -> Void)? = nil) {
        onFreshThread {
            for label in labels { loop.perform(label: label) { then?() } }
        }
    }

    @Test("blocks pushed from another thread during a callout run before the loop sleeps to its timer")
    func pushedDuringAPass() {
        let lines = onFreshThread { () -> [String] in
            let loop = EVRunLoop(clock: EVVirtualClock())
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            loop.add(EVTimer(interval: 1, repeats: false, label: "t") { _ in EVRunLoop.current.stop() }, forMode: .default)
            // x1 sends the wake, x2 rides on it: the wait ends at once, before the timer.
            loop.perform(label: "b") { Self.performFromAnotherThread(loop, ["x1", "x2"]) }
            loop.run(mode: .default, for: .seconds(5))
            return trace.lines
        }
        #expect(lines.filter { $0.hasPrefix("block(") || $0.hasPrefix("timer(") } ==
            ["block(b)", "block(x1)", "block(x2)", "timer(t)"])
    }

    @Test("blocks pushed while the loop ignores wakes, and one pushed after their drain, run before the timer")
    func pushedInTheWakeWindow() {
        let lines = onFreshThread { () -> [String] in
            let loop = EVRunLoop(clock: EVVirtualClock())
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            loop.add(EVTimer(interval: 1, repeats: false, label: "t") { _ in EVRunLoop.current.stop() }, forMode: .default)
            // w's wake ends the first wait at once. The afterWaiting callout after it is in
            // CF's window, where wakeUp() is dropped: y1's wake is dropped and y2 sends none;
            // the loop drains them before it sleeps and runs them at the next pass. y2's
            // callout pushes z, whose wake must be sent (the drain cleared the flag).
            var pushed = false
            loop.add(EVObserver(activities: .afterWaiting) { _, _ in
                guard !pushed else { return }
                pushed = true
                Self.performFromAnotherThread(loop, ["y1"])
                Self.performFromAnotherThread(loop, ["y2"]) { Self.performFromAnotherThread(loop, ["z"]) }
            }, forMode: .default)
            loop.perform(label: "b") { Self.performFromAnotherThread(loop, ["w"]) }
            loop.run(mode: .default, for: .seconds(5))
            return trace.lines
        }
        #expect(lines.filter { $0.hasPrefix("block(") || $0.hasPrefix("timer(") } ==
            ["block(b)", "block(w)", "block(y1)", "block(y2)", "block(z)", "timer(t)"])
    }
}
