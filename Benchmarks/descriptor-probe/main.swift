// descriptor-probe: "8,000 idle pipes plus one active one", written as a new user would,
// on RunLoopKit and (in C, CLibevBench/descriptorprobe.c) on libev. Each run is one fresh
// process; `interleave.sh` alternates the two and prints the ratio of passes per second.
//
//     descriptor-probe VARIANT [IDLE] [SECONDS] [WARMUP]
//
// Every variant makes IDLE + 1 non-blocking pipes and watches every read end for reading;
// each handler reads a byte and, when it got one, counts the call and writes a byte back
// on the active pipe, so exactly one source is ready per pass. Prints the handler calls
// per second of the measured run, the cost to create and add a source, and the cost per
// source of the first pass, which starts watching them (libev: ev_io_start; its epoll_ctl
// calls come in the first ev_run, which the add figure does not include).
//
// RunLoopKit variants (EVRunLoop.current, on the main thread unless said otherwise):
//   default   sources in .default, loop.run(mode: .default, for: SECONDS)
//   common    sources in .common, the same run
//   observer  default, plus an EVObserver counting passes (.afterWaiting)
//   poll      default, run as `while now < end { loop.run(mode: .default, for: .zero) }`
//   isolated  default, the count kept in a top-level var through EVRunLoop.isolated
//   thread    default, on a thread of its own (as loop-bench's workload)
// libev variants: libev (ev_default_loop), libev-new (ev_loop_new(EVFLAG_AUTO)).
//
// The measured parts are functions whose names start with `measured`, for
// `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measuredRun*'` (the
// run; `*measuredPolls*` for poll, `*measuredAdds*` the adds, `*measuredArm*` the pass
// that starts watching the descriptors; the C side's run is `dp_libev_measuredRun`).
import CLibevBench
import Foundation
import RunLoopKit
import Synchronization

let arguments = CommandLine.arguments
let variant = arguments.count > 1 ? arguments[1] : "default"
let idle = arguments.count > 2 ? Int(arguments[2])! : 8_000
let seconds = arguments.count > 3 ? Double(arguments[3])! : 3
let warmup = arguments.count > 4 ? Double(arguments[4])! : 0.2

/// Handler calls, counted by every Swift variant but `isolated`.
let calls = Atomic<Int>(0)
/// Passes, counted by the `observer` variant's observer.
let passes = Atomic<Int>(0)
/// The `isolated` variant's count: main-actor state, as top-level code's variables are.
var isolatedCalls = 0

/// What one run measured.
struct Outcome {
    var calls: Int
    var wallNanos: Int64
    var addNanos: Int64
    var armNanos: Int64 = 0
}

func nowNanos() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// IDLE + 1 non-blocking pipes: the read ends (the active one last) and the active write end.
func makePipes(count: Int) -> (reads: [Int32], activeWrite: Int32) {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = min(limit.rlim_max, rlim_t(2 * count + 100))
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    var reads: [Int32] = []
    var write: Int32 = -1
    for _ in 0..<count {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { fatalError("pipe failed after \(reads.count) pipes, errno \(errno)") }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        reads.append(fds[0])
        write = fds[1]
    }
    return (reads, write)
}

@inline(never)
func measuredRun(_ loop: EVRunLoop, for seconds: Double) {
    loop.run(mode: .default, for: .seconds(seconds))
}

@inline(never)
func measuredPolls(_ loop: EVRunLoop, for seconds: Double) {
    let end = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < end { loop.run(mode: .default, for: .zero) }
}

/// The handler every variant but `isolated` gives each source.
func atomicHandler(fd: Int32, activeWrite: Int32) -> @Sendable (EVSource) -> Void {
    { _ in
        var byte: UInt8 = 0
        if read(fd, &byte, 1) == 1 {
            calls.add(1, ordering: .relaxed)
            _ = write(activeWrite, &byte, 1)
        }
    }
}

/// The `isolated` variant's handler: main-actor state through `EVRunLoop.isolated`.
@MainActor
func isolatedHandler(fd: Int32, activeWrite: Int32) -> @Sendable (EVSource) -> Void {
    EVRunLoop.isolated { (_: EVSource) in
        var byte: UInt8 = 0
        if read(fd, &byte, 1) == 1 {
            isolatedCalls += 1
            _ = write(activeWrite, &byte, 1)
        }
    }
}

/// The Swift side: sources made and added, a warm-up run, the measured run.
func runLoopKit(
    _ variant: String, reads: [Int32], activeWrite: Int32,
    handler: (Int32) -> @Sendable (EVSource) -> Void, count: () -> Int
) -> Outcome {
    let loop = EVRunLoop.current
    let mode: EVRunLoop.Mode = variant == "common" ? .common : .default
    let t0 = nowNanos()
    let sources = measuredAdds(loop, reads: reads, mode: mode, handler: handler)
    let add = nowNanos() - t0
    // The loop watches a mode's descriptors from its first run on: a pass that only arms them.
    let t1 = nowNanos()
    measuredArm(loop)
    let arm = nowNanos() - t1
    if variant == "observer" {
        loop.add(EVObserver(activities: .afterWaiting) { _, _ in passes.add(1, ordering: .relaxed) }, forMode: .default)
    }
    var byte: UInt8 = 1
    _ = write(activeWrite, &byte, 1)
    if warmup > 0 { loop.run(mode: .default, for: .seconds(warmup)) }
    let before = count()
    let wall0 = nowNanos()
    if variant == "poll" { measuredPolls(loop, for: seconds) } else { measuredRun(loop, for: seconds) }
    let wall = nowNanos() - wall0
    let after = count()
    for source in sources { source.invalidate() }
    return Outcome(calls: after - before, wallNanos: wall, addNanos: add, armNanos: arm)
}

/// Creates and adds a source per read end.
@inline(never)
func measuredAdds(
    _ loop: EVRunLoop, reads: [Int32], mode: EVRunLoop.Mode, handler: (Int32) -> @Sendable (EVSource) -> Void
) -> [EVSource] {
    var sources: [EVSource] = []
    sources.reserveCapacity(reads.count)
    for fd in reads {
        let source = try! EVSource(fileDescriptor: fd, handler: handler(fd))
        loop.add(source, forMode: mode)
        sources.append(source)
    }
    return sources
}

/// One pass without sleeping: the loop starts watching the sources' descriptors.
@inline(never)
func measuredArm(_ loop: EVRunLoop) {
    loop.run(mode: .default, for: .zero)
}

func libev(defaultLoop: Bool, reads: [Int32], activeWrite: Int32) -> Outcome {
    var outcome = Outcome(calls: 0, wallNanos: 0, addNanos: 0)
    var calls: Int64 = 0
    let status = reads.withUnsafeBufferPointer { fds in
        dp_libev_feed(Int32(fds.count), fds.baseAddress, activeWrite, defaultLoop ? 1 : 0, warmup, seconds,
                      &calls, &outcome.wallNanos, &outcome.addNanos)
    }
    precondition(status == 0, "dp_libev_feed failed")
    outcome.calls = Int(calls)
    return outcome
}

let (reads, activeWrite) = makePipes(count: idle + 1)
let outcome: Outcome
switch variant {
case "libev": outcome = libev(defaultLoop: true, reads: reads, activeWrite: activeWrite)
case "libev-new": outcome = libev(defaultLoop: false, reads: reads, activeWrite: activeWrite)
case "default", "common", "observer", "poll":
    outcome = runLoopKit(variant, reads: reads, activeWrite: activeWrite, handler: { atomicHandler(fd: $0, activeWrite: activeWrite) },
                         count: { calls.load(ordering: .relaxed) })
case "isolated":
    outcome = runLoopKit(variant, reads: reads, activeWrite: activeWrite, handler: { isolatedHandler(fd: $0, activeWrite: activeWrite) },
                         count: { isolatedCalls })
case "thread":
    let result = Mutex<Outcome?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        let outcome = runLoopKit("thread", reads: reads, activeWrite: activeWrite,
                                 handler: { atomicHandler(fd: $0, activeWrite: activeWrite) },
                                 count: { calls.load(ordering: .relaxed) })
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    outcome = result.withLock { $0! }
default:
    fatalError("descriptor-probe: unknown variant \(variant)")
}
let perSecond = Double(outcome.calls) / (Double(outcome.wallNanos) / 1e9)
let addPerSource = Double(outcome.addNanos) / Double(reads.count)
var line = "\(variant) calls/s \(Int(perSecond)) calls \(outcome.calls) add-ns/source \(Int(addPerSource))"
    + " arm-ns/source \(outcome.armNanos / Int64(reads.count))"
if variant == "observer" { line += " passes \(passes.load(ordering: .relaxed))" }
print(line)
