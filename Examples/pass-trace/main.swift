import Glibc
import RunLoopKit

if CommandLine.arguments.dropFirst().contains(where: { $0 == "-h" || $0 == "--help" }) {
    print("""
        OVERVIEW: Prints the activity and callout sequence of a one-second run of the main loop:
        a one-shot timer, a block, and an observer of every activity.

        USAGE: pass-trace

        OPTIONS:
          -h, --help  Show help information.
        """)
    exit(0)
}

// Prints the activity sequence of a short run on the real (libev) loop: a one-shot timer,
// a block, and an observer of every activity. This is the main thread's loop: its default
// mode services the main dispatch queue and so never runs empty (CF's rule), and the run
// lasts its whole second.
let loop = EVRunLoop.main
let trace = EVRunLoop.Trace()
loop.trace = trace
loop.add(EVObserver(activities: .allActivities, label: "observer") { _, _ in }, forMode: .default)
loop.add(EVTimer(interval: 0.05, repeats: false, label: "once") { _ in }, forMode: .default)
loop.perform(label: "hello") { }
let result = loop.run(mode: .default, for: .seconds(1))
for line in trace.lines { print(line) }
print("result:", result)
