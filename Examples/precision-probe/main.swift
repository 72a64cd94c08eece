import ExampleSupport
import Foundation
import RunLoopKit

// Measures RunLoopKit's timer precision on the real (libev) loop:
//   1. a whole-second wall-clock aligned timer: each tick's phase after the second;
//   2. a 10 ms repeating timer: lateness of each fire, and drift of the scheduled dates.

let usage = """
    OVERVIEW: Measures RunLoopKit's timer precision on the real loop: the phase of a whole-second
    aligned timer, then the lateness and drift of a 10 ms repeating timer. Build with -c release.

    USAGE: precision-probe [<ticks>] [<seconds>]

    ARGUMENTS:
      <ticks>     Whole-second ticks of the aligned timer (default: 10).
      <seconds>   Seconds of the 10 ms timer (default: 10).

    OPTIONS:
      -h, --help  Show help information.
    """
let rawArguments = CommandLine.arguments.dropFirst()
if rawArguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
    print(usage)
    exit(0)
}
if let wrong = rawArguments.first(where: { Int($0) == nil || Int($0)! < 1 }) {
    FileHandle.standardError.write(Data("precision-probe: '\(wrong)' is not a positive whole number\n\n\(usage)\n".utf8))
    exit(64)
}
let arguments = rawArguments.compactMap { Int($0) }
let ticks = arguments.first ?? 10
let tenMillisecondSeconds = arguments.dropFirst().first ?? 10

/// Samples written by timer callouts, read after the run; all on the main thread (main actor).
final class Recorded {
    var values: [Double] = []
}

/// One line of order statistics, with ExampleSupport's percentile definition.
func describe(_ name: String, _ microseconds: [Double]) {
    var samples = Samples()
    for value in microseconds { samples.append(value) }
    let line = String(format: "%@: n=%d median %.1f µs, p99 %.1f µs, max %.1f µs", name, samples.count,
                      samples.median, samples.p99, samples.maximum)
    print(line)
}

// The main thread's loop: its default mode never runs empty (it services the main queue, as
// CFRunLoop's main loop does), so each run is ended with stop().
let loop = EVRunLoop.main

// 1. Whole-second aligned timer: the phase is how far past x.000 the callout runs.
let phases = Recorded()
let aligned = EVTimer(alignedTo: 1, block: EVRunLoop.isolated { timer in
    let wall = Date().timeIntervalSince1970
    phases.values.append((wall - wall.rounded(.down)) * 1e6)
    if phases.values.count == ticks { timer.invalidate(); loop.stop() }
})
loop.add(aligned, forMode: .default)
loop.run()
describe("aligned 1 s phase after the second", phases.values)

// 2. A 10 ms repeating timer: lateness against its scheduled date, and the schedule's drift.
let lateness = Recorded()
let scheduled = Recorded()
let fires = tenMillisecondSeconds * 100
let ten = EVTimer(interval: 0.01, repeats: true, block: EVRunLoop.isolated { timer in
    lateness.values.append(Double(loop.now.nanoseconds - timer.fireInstant!.nanoseconds) / 1e3)
    scheduled.values.append(Double(timer.fireInstant!.nanoseconds))
    if scheduled.values.count == fires { timer.invalidate(); loop.stop() }
})
loop.add(ten, forMode: .default)
loop.run()
describe("10 ms timer lateness", lateness.values)
let first = scheduled.values.first ?? 0
let drift = scheduled.values.enumerated().map { abs($1 - first - Double($0) * 10_000_000) }.max() ?? 0
print(String(format: "10 ms timer: %d fires, %d skipped; accumulated drift of scheduled dates after %d s: %.0f ns",
             scheduled.values.count, Int(((scheduled.values.last ?? first) - first) / 10_000_000) + 1 - scheduled.values.count,
             tenMillisecondSeconds, drift))
