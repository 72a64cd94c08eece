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
import CGLib
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
    g_timeout_add(50, GLibCall.sourceFunc, timeout.userData)
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

MainActor.assumeIsolated {
    switch CommandLine.arguments.dropFirst().first {
    case "host": host()
    default:
        FileHandle.standardError.write("usage: glib-main-probe host\n".data(using: .utf8)!)
        exit(2)
    }
    for line in events { print(line) }
}
