import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit

/// One scenario of the GLib differential suite: sources attached to a fresh `GMainContext`,
/// whose dispatches are logged, and a GLib timeout that ends it. The same scenario runs under
/// GLib's own `g_main_loop_run` (the oracle) and under each ``GLibDriver`` of RunLoopKit.
struct GLibScenario: Sendable, CustomStringConvertible {
    let name: String
    /// Attaches the scenario's sources to the run's context; called on the driving thread
    /// before the driver runs.
    let setUp: @Sendable (ScenarioRun) -> Void
    /// When the run ends: the deadline timeout, at `G_PRIORITY_LOW`.
    var endAfter: UInt32 = 300

    var description: String { name }
}

/// One run of a scenario under one driver: the context, the log, and what the driver gives
/// the scenario (``finish()``). Touched on the driving thread only, but for ``fromAnyThread(_:)``.
final class ScenarioRun {
    let context: OpaquePointer
    let start = monotonicSeconds()
    /// What was dispatched, in order, with the seconds since ``start``.
    private(set) var entries: [(name: String, at: Double)] = []
    /// GLib calls, descriptors and the like the run keeps until it ends.
    private var kept: [AnyObject] = []
    private var cleanups: [() -> Void] = []
    /// The sources attached, referenced until the run ends and then destroyed.
    private var sources: [UnsafeMutablePointer<GSource>] = []
    /// Ends the driver's run (set by the driver).
    var endRun: () -> Void = {}
    private(set) var isFinished = false

    init(context: OpaquePointer) { self.context = context }

    func log(_ name: String) { entries.append((name, monotonicSeconds() - start)) }

    /// Ends the run (the deadline's callback).
    func finish() {
        isFinished = true
        endRun()
    }

    /// Runs `cleanup` after the driver's run, before the context goes.
    func atEnd(_ cleanup: @escaping () -> Void) { cleanups.append(cleanup) }

    func end() {
        for source in sources {
            g_source_destroy(source)
            g_source_unref(source)
        }
        sources = []
        for cleanup in cleanups.reversed() { cleanup() }
        cleanups = []
        kept = []
    }

    /// A GLib timeout of `milliseconds` at `priority`; `body` returns whether it repeats.
    @discardableResult
    func timeout(_ milliseconds: UInt32, priority: Int32 = 0, _ body: @escaping () -> Bool) -> UnsafeMutablePointer<GSource> {
        let call = GLibCall(body)
        kept.append(call)
        let source = g_timeout_source_new(milliseconds)!
        g_source_set_priority(source, priority)
        g_source_set_callback(source, GLibCall.sourceFunc, call.userData, nil)
        g_source_attach(source, context)
        sources.append(source)
        return source
    }

    /// A GLib idle at `priority`; `body` returns whether it stays.
    @discardableResult
    func idle(priority: Int32, canRecurse: Bool = false, _ body: @escaping () -> Bool) -> UnsafeMutablePointer<GSource> {
        let call = GLibCall(body)
        kept.append(call)
        let source = g_idle_source_new()!
        g_source_set_priority(source, priority)
        g_source_set_can_recurse(source, canRecurse ? 1 : 0)
        g_source_set_callback(source, GLibCall.sourceFunc, call.userData, nil)
        g_source_attach(source, context)
        sources.append(source)
        return source
    }

    /// A GLib descriptor watch (`g_unix_fd_source_new`) of `condition` on `fd`; `body` is
    /// given the conditions GLib reported and returns whether the watch stays.
    @discardableResult
    func watch(_ fd: Int32, _ condition: GIOCondition, _ body: @escaping (GIOCondition) -> Bool) -> UnsafeMutablePointer<GSource> {
        let call = GLibConditionCall(body)
        kept.append(call)
        let source = g_unix_fd_source_new(fd, condition)!
        g_source_set_callback(source, unsafeBitCast(GLibConditionCall.fdFunc, to: GSourceFunc.self), call.userData, nil)
        g_source_attach(source, context)
        sources.append(source)
        return source
    }

    /// Keeps `object` until the run ends.
    func keep(_ object: AnyObject) { kept.append(object) }

    /// The context's address, for another thread.
    var contextAddress: UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context))) }
}

/// A `GUnixFDSourceFunc` as a Swift closure given the reported conditions.
final class GLibConditionCall {
    let body: (GIOCondition) -> Bool
    init(_ body: @escaping (GIOCondition) -> Bool) { self.body = body }
    var userData: gpointer { Unmanaged.passUnretained(self).toOpaque() }
    static let fdFunc: GUnixFDSourceFunc = { _, condition, data in
        Unmanaged<GLibConditionCall>.fromOpaque(data!).takeUnretainedValue().body(condition) ? 1 : 0
    }
}

/// GLib's conditions as text, in a fixed order ("IN|HUP").
func conditionText(_ condition: GIOCondition) -> String {
    let names: [(GIOCondition, String)] = [
        (G_IO_IN, "IN"), (G_IO_OUT, "OUT"), (G_IO_PRI, "PRI"), (G_IO_ERR, "ERR"), (G_IO_HUP, "HUP"), (G_IO_NVAL, "NVAL"),
    ]
    let text = names.filter { condition.rawValue & $0.0.rawValue != 0 }.map(\.1).joined(separator: "|")
    return text.isEmpty ? "none" : text
}

/// Counts the calls of GLib's poll function on the calling thread (a run's thread): each
/// GLib iteration polls once, so a spinning driver shows as many polls.
enum ThreadPolls {
    private static let key = "RunLoopKitGLibTests.polls"

    static var count: Int {
        get { (Thread.current.threadDictionary[key] as? Int) ?? 0 }
        set { Thread.current.threadDictionary[key] = newValue }
    }

    static let poll: GPollFunc = { fds, count, timeout in
        ThreadPolls.count += 1
        return g_poll(fds, count, timeout)
    }
}
