// first-steps: a run loop for someone who has never used one. Run `swift run first-steps`.
// README.md shows the lines between the snippet markers; a test checks that they match.
import Glibc

if CommandLine.arguments.dropFirst().contains(where: { $0 == "-h" || $0 == "--help" }) {
    print("USAGE: first-steps\n\nTwo timers, an observer and a block on the main thread's run loop, for three seconds.")
    exit(0)
}

// snippet: readme-first
import RunLoopKit

// A run loop waits until a timer, a source or a queued block needs it, then calls it.
// Each thread has one; this is the main thread's.
let loop = EVRunLoop.current

// A timer on every whole second of the wall clock; `wakeDate` is when the loop woke for it.
let clock = EVTimer(alignedTo: 1) { _ in print("tick", loop.wakeDate!) }
// Every 0.5 s, up to 0.1 s late: the tolerance lets the loop serve it in another timer's wake.
let refresh = EVTimer(interval: 0.5, repeats: true, tolerance: 0.1) { _ in print("  refresh") }
loop.add(clock, forMode: .common)
loop.add(refresh, forMode: .common)

// An observer runs at points of every pass: here, just before the loop goes to sleep.
loop.add(EVObserver(activities: .beforeWaiting) { _, _ in print("  (sleeping)") }, forMode: .default)
// A block runs once, at the loop's next pass.
loop.perform { print("the loop is running") }

// Nothing above happens until the loop runs: run its default mode for three seconds.
let result = loop.run(mode: .default, for: .seconds(3))
print("run returned:", result)
// end
