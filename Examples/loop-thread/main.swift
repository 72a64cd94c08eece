// loop-thread: an async main with a run loop on a thread of its own. Run `swift run loop-thread`.
// An async main gives the main thread to dispatchMain(), so EVRunLoop.main never runs here:
// the loop gets a thread of its own. Timers with tolerance fire on that thread, loop.clock
// sleeps, and an actor pinned to the loop keeps its state there. No unchecked code.
// The "Embedding RunLoopKit" article shows the lines between the snippet markers.
import Glibc

if CommandLine.arguments.dropFirst().contains(where: { $0 == "-h" || $0 == "--help" }) {
    print("USAGE: loop-thread\n\nAn async main with a run loop on a thread of its own, for about a second.")
    exit(0)
}

// snippet: embedding-async-main
import RunLoopKit

/// A tally kept on the loop's thread: the actor's jobs run on the loop.
actor Tally {
    let loop: EVRunLoop
    private(set) var ticks = 0
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(loop: EVRunLoop) { self.loop = loop }

    /// A tick every 0.2 s, up to 0.05 s late; the callout runs isolated to the actor.
    func start() -> EVTimer {
        let timer = EVTimer(interval: 0.2, repeats: true, tolerance: 0.05, block: EVRunLoop.isolated { _ in
            self.ticks += 1
        })
        loop.add(timer, forMode: .common)
        return timer
    }
}

let loop = EVRunLoop.startThread(name: "tally")
let tally = Tally(loop: loop)
let timer = await tally.start()
// Sleeps on the loop's clock: a timer of the loop, coalesced with the others.
try? await loop.clock.sleep(for: .seconds(1), tolerance: .milliseconds(50))
timer.invalidate()
print("ticks in one second:", await tally.ticks)
await loop.shutdown()  // stops the loop, lets go of what it held, joins its thread
// end
