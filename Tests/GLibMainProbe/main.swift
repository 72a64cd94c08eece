// glib-main-probe: runs one GLib scenario on the real main thread and prints its log, one
// line per event, for GLibMainThreadTests.
//
//     glib-main-probe <scenario>
//
// EVRunLoop.main services libdispatch's main queue (DispatchQueue.main, the main actor) only
// on the main thread, from a synchronous main, and GLib's default context is the main
// thread's in a GTK program. Swift Testing runs tests off the main thread, so the scenarios
// live in this program, whose top-level code is a synchronous main on the main thread.
//
// - host: EVRunLoop.main.run() hosts GLib's default context: GLib's timeouts, idles and
//   descriptor watches run on the main thread, next to the main queue and the main actor.
// - attach: EVRunLoop.main attached to the default context, the program in g_main_loop_run:
//   the main queue, the main actor, timers, a frame timer, sources and observers run on the
//   main thread; an idle second costs no pass and no wake; after detach() nothing runs.
import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib

/// The events of the scenario, in order; everything here runs on the main thread.
var events: [String] = []

@MainActor func log(_ line: String) { events.append(line) }

/// A GLib callback as a Swift closure (GLib's C callbacks get it as user data, unretained:
/// the scenario keeps it alive).
final class GLibCall {
    let body: () -> Bool
    init(_ body: @escaping () -> Bool) { self.body = body }
    var userData: gpointer { Unmanaged.passUnretained(self).toOpaque() }
    static func from(_ data: gpointer?) -> GLibCall { Unmanaged<GLibCall>.fromOpaque(data!).takeUnretainedValue() }
    static let sourceFunc: GSourceFunc = { data in from(data).body() ? 1 : 0 }
    static let fdFunc: GUnixFDSourceFunc = { _, _, data in from(data).body() ? 1 : 0 }
}

/// "main" or "other": the thread a callback runs on.
func thread() -> String { Thread.isMainThread ? "main" : "other" }

/// EVRunLoop.main hosts the default context; GLib's sources and the main queue share it.
@MainActor func host() {
    let loop = EVRunLoop.main
    let host = loop.host()
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fatalError("pipe") }
    let pending = ["idle", "timeout", "fd", "seconds", "dispatch", "mainActor"]
    var seen: Set<String> = []
    func saw(_ what: String) {
        log("\(what) \(thread())")
        seen.insert(what)
        if seen.count == pending.count { loop.stop() }
    }
    let idle = GLibCall { MainActor.assumeIsolated { saw("idle") }; return false }
    let timeout = GLibCall {
        MainActor.assumeIsolated { saw("timeout") }
        var byte: UInt8 = 1
        _ = write(fds[1], &byte, 1)
        return false
    }
    let readable = GLibCall {
        var byte: UInt8 = 0
        _ = read(fds[0], &byte, 1)
        MainActor.assumeIsolated { saw("fd") }
        return false
    }
    let seconds = GLibCall { MainActor.assumeIsolated { saw("seconds") }; return false }
    g_idle_add(GLibCall.sourceFunc, idle.userData)
    // Due well after the loop's first pass, even on a loaded machine: a first pass later than
    // the timeout would rightly dispatch it before the idle (its priority is higher), as GLib's
    // own loop does.
    g_timeout_add(500, GLibCall.sourceFunc, timeout.userData)
    g_unix_fd_add(fds[0], G_IO_IN, GLibCall.fdFunc, readable.userData)
    g_timeout_add_seconds(2, GLibCall.sourceFunc, seconds.userData)
    DispatchQueue.main.async { MainActor.assumeIsolated { saw("dispatch") } }
    Task { @MainActor in saw("mainActor") }
    let result = loop.run(mode: .default, for: .seconds(10))
    log("return(\(result))")
    host.unhost()
    log("owner after unhost: \(g_main_context_is_owner(nil) != 0)")
    withExtendedLifetime([idle, timeout, readable, seconds]) {}
}

/// Voluntary context switches of the process so far: how often its threads slept and woke.
func voluntarySwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw
}

/// Runs GLib's default-context loop until `quit` (or 10 s).
@MainActor func runGLib(_ mainLoop: OpaquePointer?, seconds: UInt32 = 10) {
    let limit = GLibCall { g_main_loop_quit(mainLoop); return false }
    let id = g_timeout_add_seconds(seconds, GLibCall.sourceFunc, limit.userData)
    g_main_loop_run(mainLoop)
    if let source = g_main_context_find_source_by_id(nil, id) { g_source_destroy(source) }
    withExtendedLifetime(limit) {}
}

/// EVRunLoop.main attached to GLib's default context, GLib's loop in control.
@MainActor func attach() {
    let loop = EVRunLoop.main
    let mainLoop = g_main_loop_new(nil, 0)
    let attachment = loop.attach()
    let expected: Set<String> = [
        "dispatch", "mainActorTask", "MainActor.run", "timer", "alignedTimer", "frameTimer",
        "manualSource", "fdSource", "observer", "block",
    ]
    var seen: Set<String> = []
    let saw: @Sendable (String) -> Void = EVRunLoop.isolated { (what: String) in
        guard !seen.contains(what) else { return }
        seen.insert(what)
        log("\(what) \(thread())")
        if seen == expected { g_main_loop_quit(mainLoop) }
    }
    DispatchQueue.main.async { saw("dispatch") }
    Task { @MainActor in saw("mainActorTask") }
    Task.detached { await MainActor.run { saw("MainActor.run") } }
    let start = loop.now
    let timer = EVTimer(interval: 0.1, repeats: false, tolerance: 0.02, block: EVRunLoop.isolated { (_: EVTimer) in
        let late = loop.now - start
        saw("timer")
        if late < .milliseconds(100) || late > .milliseconds(400) { log("timer after \(late)") }
    })
    loop.add(timer, forMode: .common)
    let aligned = EVTimer(alignedTo: 0.1, tolerance: 0.01) { timer in
        saw("alignedTimer")
        timer.invalidate()
    }
    loop.add(aligned, forMode: .common)
    let frames = EVFrameTimer(framesPerSecond: 60) { frameTimer in
        saw("frameTimer")
        frameTimer.invalidate()
    }
    loop.add(frames, forMode: .common)
    let manual = EVSource { _ in saw("manualSource") }
    loop.add(manual, forMode: .common)
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fatalError("pipe") }
    let readEnd = fds[0], writeEnd = fds[1]
    let readable = try! EVSource(fileDescriptor: readEnd) { _ in
        var byte: UInt8 = 0
        _ = read(readEnd, &byte, 1)
        saw("fdSource")
    }
    loop.add(readable, forMode: .common)
    let observer = EVObserver(activities: .afterWaiting, repeats: false) { _, _ in saw("observer") }
    loop.add(observer, forMode: .common)
    Thread.detachNewThread {
        usleep(150_000)
        manual.signal()
        loop.wakeUp()
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        loop.perform(inModes: [.common]) { saw("block") }
    }
    runGLib(mainLoop)
    log("all seen: \(seen == expected)")

    // Idle: nothing due for a second. GLib sleeps in poll(); the loop's source wakes it for nothing.
    manual.invalidate()
    readable.invalidate()
    let passes = loop.statistics.passes
    let switches = voluntarySwitches()
    let second = GLibCall { g_main_loop_quit(mainLoop); return false }
    g_timeout_add(1000, GLibCall.sourceFunc, second.userData)
    g_main_loop_run(mainLoop)
    log("idle second: \(loop.statistics.passes - passes) passes, \(voluntarySwitches() - switches) sleeps")

    // Detached: GLib's loop runs, the RunLoopKit loop does not.
    attachment.detach()
    log("attached after detach: \(attachment.isAttached), owner: \(g_main_context_is_owner(nil) != 0)")
    var firedAfterDetach = false
    let late = EVTimer(interval: 0.05, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in firedAfterDetach = true })
    loop.add(late, forMode: .common)
    let quit = GLibCall { g_main_loop_quit(mainLoop); return false }
    g_timeout_add(300, GLibCall.sourceFunc, quit.userData)
    g_main_loop_run(mainLoop)
    log("timer fired after detach: \(firedAfterDetach)")
    late.invalidate()
    close(writeEnd)
    g_main_loop_unref(mainLoop)
    withExtendedLifetime([second, quit]) {}
}

MainActor.assumeIsolated {
    switch CommandLine.arguments.dropFirst().first {
    case "host": host()
    case "attach": attach()
    default:
        FileHandle.standardError.write("usage: glib-main-probe host|attach\n".data(using: .utf8)!)
        exit(2)
    }
    for line in events { print(line) }
}
