// main-queue-probe: runs one main-loop scenario on the real main thread and prints its log,
// one line per event, for MainThreadTests.
//
//     main-queue-probe <scenario> <ev|polled|cf>
//
// The main loop services libdispatch's main queue only on the main thread, from a synchronous
// main. Swift Testing runs tests off the main thread, after its async entry point has already
// handed the main thread to `dispatchMain()`; an exit test's child is started the same way. So
// the scenarios live in this small program, whose top-level code is a synchronous main on the
// main thread, and the tests launch it: once on EVRunLoop.main, once on CFRunLoop's main loop
// (the reference), and compare the logs.
import CoreFoundation
import Foundation
import RunLoopKit
#if compiler(>=6.3)
@_spi(Experimental) import RunLoopKitExperimental
#endif
import Synchronization

#if compiler(>=6.3)
// First thing, before any task or actor: the experimental main-actor executor, on request.
if CommandLine.arguments.dropFirst().first == "main-executor" { EVRunLoop.installAsMainActorExecutor() }
#endif

/// The events of the scenario, in order; callouts of both loops append to it.
let events = Mutex<[String]>([])

func log(_ line: String) { events.withLock { $0.append(line) } }

/// What the "concurrency" scenario still waits for.
let concurrencyPending = Atomic(4)

/// What a scenario needs of a main loop.
protocol MainLoop: Sendable {
    func observe(_ label: String, mode: String)
    func addTimer(_ label: String, after seconds: Double, mode: String, callout: @escaping @Sendable () -> Void)
    func run(_ mode: String, seconds: Double, returnAfterSourceHandled: Bool)
    func stop()
    func addCommonMode(_ mode: String)
}

extension MainLoop {
    func run(_ mode: String = "default", seconds: Double, returnAfterSourceHandled: Bool = false) {
        run(mode, seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
    }
}

struct EVMainLoop: MainLoop {
    var loop: EVRunLoop { .main }

    static func mode(_ name: String) -> EVRunLoop.Mode { name == "default" ? .default : EVRunLoop.Mode(name) }

    func observe(_ label: String, mode: String) {
        let observer = EVObserver(activities: .allActivities, label: label) { _, activity in
            log("\(label)@\(activity)")
        }
        loop.add(observer, forMode: Self.mode(mode))
    }

    func addTimer(_ label: String, after seconds: Double, mode: String, callout: @escaping @Sendable () -> Void) {
        let timer = EVTimer(interval: seconds, repeats: false, label: label) { _ in
            log("timer(\(label))")
            callout()
        }
        loop.add(timer, forMode: Self.mode(mode))
    }

    func run(_ mode: String, seconds: Double, returnAfterSourceHandled: Bool) {
        let result = loop.run(mode: Self.mode(mode), for: .seconds(seconds),
                              returnAfterSourceHandled: returnAfterSourceHandled)
        log("return(\(result))")
    }

    func stop() { loop.stop() }
    func addCommonMode(_ mode: String) { loop.addCommonMode(Self.mode(mode)) }
}

/// Whether `PolledMainLoop`'s poll() loop is on the stack: a run inside a callout is nested.
let polledDriving = Atomic(false)

/// `EVRunLoop.main` driven from a hand-written poll() loop through its poll descriptor, as
/// another event loop would drive it; runs nested in callouts, and runs that never wait
/// (zero seconds), are plain runs.
struct PolledMainLoop: MainLoop {
    let plain = EVMainLoop()

    func observe(_ label: String, mode: String) { plain.observe(label, mode: mode) }
    func addTimer(_ label: String, after seconds: Double, mode: String, callout: @escaping @Sendable () -> Void) {
        plain.addTimer(label, after: seconds, mode: mode, callout: callout)
    }
    func stop() { plain.stop() }
    func addCommonMode(_ mode: String) { plain.addCommonMode(mode) }

    func run(_ mode: String, seconds: Double, returnAfterSourceHandled: Bool) {
        guard seconds > 0, !polledDriving.load(ordering: .relaxed) else {
            return plain.run(mode, seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
        }
        polledDriving.store(true, ordering: .relaxed)
        defer { polledDriving.store(false, ordering: .relaxed) }
        let loop = EVRunLoop.main
        let deadline = loop.now + .nanoseconds(Int64(seconds * 1e9))
        var watch = pollfd(fd: loop.pollDescriptor, events: Int16(POLLIN), revents: 0)
        var result: EVRunLoop.RunResult?
        while result == nil {
            let wait = loop.preparePolledPass(mode: EVMainLoop.mode(mode), until: deadline,
                                              returnAfterSourceHandled: returnAfterSourceHandled)
            if loop.currentMode == nil, wait == .never {  // a mode with nothing to run
                loop.endPolledRun()
                result = .finished
                break
            }
            _ = poll(&watch, 1, wait.milliseconds(from: loop.now))
            result = loop.dispatchPolledPass()
        }
        log("return(\(result!))")
    }
}

struct CFMainLoop: MainLoop {
    var loop: CFRunLoop { CFRunLoopGetMain() }

    static func mode(_ name: String) -> CFRunLoopMode {
        name == "default" ? kCFRunLoopDefaultMode
            : CFStringCreateWithCString(nil, name, CFStringBuiltInEncodings.UTF8.rawValue)
    }

    func observe(_ label: String, mode: String) {
        let all = CFOptionFlags(EVRunLoop.Activity.allActivities.rawValue)
        let observer = CFRunLoopObserverCreateWithHandler(nil, all, true, 0) { _, activity in
            log("\(label)@\(EVRunLoop.Activity(rawValue: UInt(activity.rawValue)))")
        }
        CFRunLoopAddObserver(loop, observer, Self.mode(mode))
    }

    func addTimer(_ label: String, after seconds: Double, mode: String, callout: @escaping @Sendable () -> Void) {
        let timer = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + seconds, 0, 0, 0) { _ in
            log("timer(\(label))")
            callout()
        }
        CFRunLoopAddTimer(loop, timer, Self.mode(mode))
    }

    func run(_ mode: String, seconds: Double, returnAfterSourceHandled: Bool) {
        let raw = CFRunLoopRunInMode(Self.mode(mode), seconds, returnAfterSourceHandled)
        log("return(\(EVRunLoop.RunResult(rawValue: Int(raw.rawValue))!))")
    }

    func stop() { CFRunLoopStop(loop) }
    func addCommonMode(_ mode: String) { CFRunLoopAddCommonMode(loop, Self.mode(mode)) }
}

/// Whether the calling thread is the process's main thread.
func onMainThread() -> Bool { Thread.isMainThread }

/// Queues `label` on the main queue; it logs `dispatch(label)` and runs `then`.
func dispatch(_ label: String, then: @escaping @Sendable () -> Void = {}) {
    DispatchQueue.main.async {
        log("dispatch(\(label))\(onMainThread() ? "" : " off the main thread")")
        then()
    }
}

let scenarios: [String: @Sendable (any MainLoop) -> Void] = [
    // Work queued before the run is serviced after the first wait, as one handled source.
    "queued": { loop in
        loop.observe("o", mode: "default")
        dispatch("a")
        dispatch("b")
        loop.run(seconds: 2, returnAfterSourceHandled: true)
    },
    // A pass that did not service the queue reads it before sleeping: the work queued by
    // the timer runs in the next pass without beforeWaiting/afterWaiting.
    "fairness": { loop in
        loop.observe("o", mode: "default")
        loop.addTimer("t", after: 0.02, mode: "default") { dispatch("d") }
        loop.run(seconds: 2, returnAfterSourceHandled: true)
    },
    // A run nested inside a main-queue callout does not drain the queue: b waits for the
    // outer run.
    "nested": { loop in
        loop.observe("o", mode: "default")
        dispatch("a") {
            dispatch("b") { loop.stop() }
            loop.addTimer("n", after: 0.02, mode: "default") {}
            loop.run(seconds: 0.3)
            log("end(a)")
        }
        loop.run(seconds: 5)
    },
    // A common mode of the main loop is never empty; a nested run inside a main-queue
    // callout, a mode that is not common, and one that does not exist yet, are.
    "empty": { loop in
        loop.observe("o", mode: "default")
        loop.run(seconds: 0.1)
        loop.observe("q", mode: "third")
        loop.run("third", seconds: 0.1)
        loop.addCommonMode("other")  // no common items: the mode is not created
        loop.run("other", seconds: 0.1)
        loop.observe("p", mode: "other")
        loop.run("other", seconds: 0.1)
        dispatch("a") { loop.run(seconds: 0.1) }
        loop.run(seconds: 2, returnAfterSourceHandled: true)
    },
    // DispatchQueue.main, asyncAfter, a main-actor task and MainActor.run from a detached
    // task all run on the main thread within one two-second run, which the last one stops.
    "concurrency": { loop in
        @Sendable func ran(_ what: String) {
            log("\(what) main=\(onMainThread())")
            if concurrencyPending.subtract(1, ordering: .relaxed).newValue == 0 { loop.stop() }
        }
        DispatchQueue.main.async { ran("async") }
        DispatchQueue.main.asyncAfter(deadline: .now() + 0.1) { ran("asyncAfter") }
        Task { @MainActor in ran("mainActorTask") }
        Task.detached { await MainActor.run { ran("MainActor.run") } }
        loop.run(seconds: 2)
    },
]

/// A model on the main actor, driven by a timer of the main loop.
@MainActor final class Model {
    var ticks = 0
    var wakes = 0

    func start(on loop: EVRunLoop) {
        // Observers are not Sendable and belong to the loop's thread: their callouts may use
        // main-actor state as they are.
        loop.add(EVObserver(activities: .afterWaiting) { _, _ in self.wakes += 1 }, forMode: .common)
        let timer = EVTimer(interval: 0.01, repeats: true, block: EVRunLoop.isolated { timer in
            self.ticks += 1  // main-actor state, in a callout of EVRunLoop.main
            if self.ticks == 3 {
                timer.invalidate()
                Task { @MainActor in log("ticks \(self.ticks) woke=\(self.wakes >= 3) main=\(onMainThread())") }
            }
        })
        loop.add(timer, forMode: .common)
    }
}

let arguments = CommandLine.arguments.dropFirst()
if arguments == ["main-executor", "ev"] {
    // EVRunLoop.main is the main actor's executor: main-actor work is a job of the loop.
    let trace = EVRunLoop.Trace()
    EVRunLoop.main.trace = trace
    Task { @MainActor in log("task main=\(onMainThread())") }
    Task.detached {
        await MainActor.run { log("MainActor.run main=\(onMainThread())") }
        await MainActor.run { EVRunLoop.main.stop() }
    }
    EVRunLoop.main.run(mode: .default, for: .seconds(2))
    let kinds = Set(trace.lines.filter { $0 == "job" || $0 == "mainQueue" })
    for line in events.withLock({ $0 }) + kinds.sorted() { print(line) }
    exit(0)
}
if arguments == ["trace", "ev"] {
    // The main queue in the loop's trace.
    let trace = EVRunLoop.Trace()
    EVRunLoop.main.trace = trace
    dispatch("a")
    EVRunLoop.main.run(mode: .default, for: .seconds(2), returnAfterSourceHandled: true)
    for line in trace.lines { print(line) }
    exit(0)
}
if arguments == ["isolated", "ev"] {
    // A main-actor model whose timer callout uses its state: ticks, then a main-actor task.
    Model().start(on: .main)
    EVRunLoop.main.run(mode: .default, for: .seconds(0.5))
    for line in events.withLock({ $0 }) { print(line) }
    exit(0)
}
if arguments == ["fork", "ev"] {
    // The main loop in a child forked from the main thread, after the parent's queue ran.
    DispatchQueue.main.async { log("parent queue") }
    EVRunLoop.main.run(mode: .default, for: .seconds(2), returnAfterSourceHandled: true)
    let child = fork()
    if child == 0 {
        events.withLock { $0 = [] }
        EVRunLoop.main.add(EVTimer(interval: 0.02, repeats: false) { _ in log("child timer") }, forMode: .default)
        DispatchQueue.main.async { log("child queue") }
        EVRunLoop.main.run(mode: .default, for: .seconds(0.3))
        let text = events.withLock { $0 }.map { "child: \($0)\n" }.joined()
        _ = text.withCString { write(1, $0, strlen($0)) }
        _exit(0)
    }
    var status: Int32 = 0
    waitpid(child, &status, 0)
    for line in events.withLock({ $0 }) { print(line) }
    print("child status \(status)")
    exit(0)
}
guard arguments.count == 2, let scenario = scenarios[arguments.first!],
      let loop: any MainLoop = ["ev": EVMainLoop(), "polled": PolledMainLoop(), "cf": CFMainLoop()][arguments.last!]
else {
    FileHandle.standardError.write(Data("usage: main-queue-probe <\(scenarios.keys.sorted().joined(separator: "|"))> <ev|polled|cf>\n".utf8))
    exit(2)
}
scenario(loop)
for line in events.withLock({ $0 }) { print(line) }
