import Glibc
import RunLoopKit
import RunLoopKitTraceTimeline

let usage = """
    OVERVIEW: Prints the activity and callout sequence of a one-second run of the main loop:
    a one-shot timer, a block, and an observer of every activity.

    USAGE: pass-trace [--svg <file>]

    OPTIONS:
      --svg <file>  Also draw the run as a timeline (each step at its time) in this SVG file.
      -h, --help    Show help information.
    """
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
    print(usage)
    exit(0)
}
var svgPath: String?
if arguments.first == "--svg", arguments.count >= 2 {
    svgPath = arguments[1]
    arguments.removeFirst(2)
}
guard arguments.isEmpty else {
    print("pass-trace: unexpected argument '\(arguments[0])'\n\n\(usage)")
    exit(64)
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
if let svgPath {
    do {
        try TraceTimeline(title: "pass-trace: one second of the main loop", trace: trace).write(toFile: svgPath)
        print("timeline:", svgPath)
    } catch {
        print("pass-trace: cannot write \(svgPath): \(error)")
        exit(1)
    }
}
