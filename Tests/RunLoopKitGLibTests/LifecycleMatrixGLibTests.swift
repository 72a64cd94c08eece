import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib
import Testing

/// The lifecycle matrix of issue 35, its GLib half: `unhost()` and `detach()` from each
/// state the loop's thread can be in (idle, a block from another thread waking it, in a
/// callout, in a run nested in a callout of a common and of a private mode, inside a GLib
/// dispatch), `stop()` and a timer's `invalidate()` from inside a GLib dispatch, hosted
/// and attached, and `shutdown()` / `syncShutdown()` inside a hosted GLib dispatch. Each scenario runs in a child process, on a `GMainContext` of its own.
/// (LifecycleMatrixTests in RunLoopKitTests has the core half.)
@Suite("Real time: the lifecycle matrix with GLib, in child processes", .timeLimit(.minutes(10)))
struct LifecycleMatrixGLibTests {
    enum State: String, CaseIterable, Codable, Sendable, CustomTestStringConvertible {
        case idle = "idle (outside the loop's runs)", woken = "asleep, woken by a block from another thread"
        case inCallout = "in a callout", nestedCommon = "in a nested run of a common mode"
        case nestedPrivate = "in a nested run of a private mode", glibDispatch = "inside a GLib dispatch"
        var testDescription: String { rawValue }
    }

    enum Way: String, CaseIterable, Codable, Sendable, CustomTestStringConvertible {
        case hosted = "GLib hosted in the loop", attached = "the loop attached to GLib"
        var testDescription: String { rawValue }
    }

    @Test("unhost() from each state: GLib's sources stop, the context is released, the loop goes on",
          arguments: State.allCases)
    func unhost(state: State) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [state] in
            GLibLifecycle.unhost(from: state)
            exit(0)
        }
        #expect(!standardErrorText(result).contains("FAIL"), "\(standardErrorText(result))")
    }

    @Test("detach() from each state: GLib stops running the loop, the context is released, the loop keeps its timers",
          arguments: State.allCases)
    func detach(state: State) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [state] in
            GLibLifecycle.detach(from: state)
            exit(0)
        }
        #expect(!standardErrorText(result).contains("FAIL"), "\(standardErrorText(result))")
    }

    @Test("stop() inside a GLib dispatch ends the loop's run", arguments: Way.allCases)
    func stopInGLibDispatch(way: Way) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [way] in
            GLibLifecycle.stopInDispatch(way)
            exit(0)
        }
        #expect(!standardErrorText(result).contains("FAIL"), "\(standardErrorText(result))")
    }

    @Test("shutdown() and syncShutdown() while the loop's thread is inside a hosted GLib dispatch return once it ends",
          arguments: [false, true])
    func shutdownInGLibDispatch(sync: Bool) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [sync] in
            await GLibLifecycle.shutdownInDispatch(sync: sync)
            exit(0)
        }
        #expect(!standardErrorText(result).contains("FAIL"), "\(standardErrorText(result))")
    }

    @Test("a timer invalidated inside a GLib dispatch never fires", arguments: Way.allCases)
    func invalidateInGLibDispatch(way: Way) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [way] in
            GLibLifecycle.invalidateInDispatch(way)
            exit(0)
        }
        #expect(!standardErrorText(result).contains("FAIL"), "\(standardErrorText(result))")
    }
}

/// The child's standard error: its failed checks, each a line starting with FAIL.
private func standardErrorText(_ result: ExitTest.Result?) -> String {
    result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? "FAIL: no result"
}

/// The scenarios, run in the child process on its test thread: each prints its failed
/// checks to standard error, a line starting with FAIL (a crash or a hang fails too).
enum GLibLifecycle {
    typealias State = LifecycleMatrixGLibTests.State

    /// Prints `message` to standard error unless `condition` holds.
    private static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { FileHandle.standardError.write(Data(("FAIL: " + message() + "\n").utf8)) }
    }

    /// Whether a thread other than this one can acquire `context`: its owner released it.
    private static func acquirableElsewhere(_ context: OpaquePointer?) -> Bool {
        let address = UInt(bitPattern: context)
        return onFreshThread {
            let context = OpaquePointer(bitPattern: address)
            guard g_main_context_acquire(context) != 0 else { return false }
            g_main_context_release(context)
            return true
        }
    }

    /// Brings the loop into `state` and calls `operation` there (`idle`: at once, before any
    /// run). `nested` holds an entry while the scenario's nested run runs; `keep` keeps the
    /// GLib callbacks alive.
    private static func arrange(_ state: State, loop: EVRunLoop, context: OpaquePointer?, log: Log,
                                nested: Log, keep: inout [AnyObject], _ operation: @escaping () -> Void) {
        switch state {
        case .idle:
            operation()
        case .woken:
            let perform = EVRunLoop.isolated { operation() }
            let observer = EVObserver(activities: .beforeWaiting, repeats: false) { _, _ in
                Thread.detachNewThread { loop.perform(inModes: [.common], label: "from another thread", perform) }
            }
            loop.add(observer, forMode: .default)
        case .inCallout:
            loop.add(EVTimer(interval: 0.03, repeats: false, label: "operation",
                             block: EVRunLoop.isolated { (_: EVTimer) in operation() }), forMode: .default)
        case .nestedCommon, .nestedPrivate:
            let mode: EVRunLoop.Mode = state == .nestedCommon ? .default : "private"
            let inner = EVTimer(interval: 0.03, repeats: false, label: "operation", block: EVRunLoop.isolated { (_: EVTimer) in
                operation()
                loop.stop()
            })
            loop.add(EVTimer(interval: 0.01, repeats: false, label: "nests", block: EVRunLoop.isolated { (_: EVTimer) in
                loop.add(inner, forMode: mode)
                nested.add("in")
                let result = loop.run(mode: mode, for: .seconds(5))
                nested.entries.removeAll()
                log.add("nested \(result)")
            }), forMode: .default)
        case .glibDispatch:
            let call = GLibCall {
                operation()
                return false
            }
            keep.append(call)
            attachTimeout(30, to: context, call)
        }
    }

    /// `unhost()` from `state`: GLib's repeating 50 ms timeout runs until the unhost and never
    /// after; the loop's own timer still fires; the context is free for another thread.
    static func unhost(from state: State) {
        let loop = EVRunLoop.current
        let context = g_main_context_new()
        let host = loop.host(context, in: [.common])
        let log = Log(), nested = Log()
        var keep: [AnyObject] = []
        let tick = GLibCall {
            log.add(host.isHosting ? "glib" : "glib after unhost")
            return true
        }
        attachTimeout(50, to: context, tick)
        arrange(state, loop: loop, context: context, log: log, nested: nested, keep: &keep) {
            host.unhost()
            log.add("unhosted")
        }
        loop.add(EVTimer(interval: 0.4, repeats: false, label: "after",
                         block: EVRunLoop.isolated { (_: EVTimer) in log.add("after") }), forMode: .default)
        let result = loop.run(mode: .default, for: .seconds(5))
        check(result == .finished, "unhost from \(state.rawValue): the run returned \(result), not finished")
        check(log.entries.contains("unhosted") && log.entries.last == "after",
                   "unhost from \(state.rawValue): log \(log.entries)")
        check(!log.entries.contains("glib after unhost"), "unhost from \(state.rawValue): GLib ran after: \(log.entries)")
        check(!host.isHosting, "unhost from \(state.rawValue): still hosting")
        check(g_main_context_is_owner(context) == 0 && acquirableElsewhere(context),
                   "unhost from \(state.rawValue): the context was not released")
        withExtendedLifetime((tick, keep)) {}
        g_main_context_unref(context)
    }

    /// `detach()` from `state`, GLib driving the loop with `g_main_loop_run`: the loop's
    /// repeating 20 ms timer fires under GLib until the pass that detaches ends and never
    /// after (but in the loop's own nested run); the context is free for another thread; the
    /// loop's own run fires the timer again.
    static func detach(from state: State) {
        let loop = EVRunLoop.current
        let context = g_main_context_new()
        let mainLoop = g_main_loop_new(context, 0)
        let attachment = loop.attach(to: context)
        let log = Log(), nested = Log()
        var keep: [AnyObject] = []
        // The pass that detaches runs to its end, as a destroyed GSource's dispatch does; the
        // loop's own nested runs are its own.
        var detachedInPass: Int?
        let tick = EVTimer(interval: 0.02, repeats: true, label: "tick", block: EVRunLoop.isolated { (_: EVTimer) in
            let underGLib = nested.entries.isEmpty && detachedInPass != loop.statistics.passes
            log.add(attachment.isAttached || !underGLib ? "tick" : "tick after detach")
        })
        loop.add(tick, forMode: .default)
        arrange(state, loop: loop, context: context, log: log, nested: nested, keep: &keep) {
            attachment.detach()
            detachedInPass = loop.statistics.passes
            log.add("detached")
        }
        let limit = GLibCall {
            g_main_loop_quit(mainLoop)
            return false
        }
        attachTimeout(400, to: context, limit)
        g_main_loop_run(mainLoop)
        check(log.entries.contains("detached"), "detach from \(state.rawValue): log \(log.entries)")
        check(!log.entries.contains("tick after detach"), "detach from \(state.rawValue): the loop ran under GLib after: \(log.entries)")
        check(!attachment.isAttached, "detach from \(state.rawValue): still attached")
        check(g_main_context_is_owner(context) == 0 && acquirableElsewhere(context),
                   "detach from \(state.rawValue): the context was not released")
        // The loop keeps its timer for its own runs.
        let before = log.entries.count
        let stop = EVTimer(interval: 0.1, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in loop.stop() })
        loop.add(stop, forMode: .default)
        let result = loop.run(mode: .default, for: .seconds(5))
        check(result == .stopped && log.entries[before...].contains { $0.hasPrefix("tick") },
                   "detach from \(state.rawValue): the loop's own run gave \(result), \(log.entries[before...])")
        tick.invalidate()
        withExtendedLifetime((limit, keep)) {}
        g_main_loop_unref(mainLoop)
        g_main_context_unref(context)
    }

    /// `stop()` from a GLib callback: hosted, the loop's run returns `stopped`; attached, the
    /// loop's polled run ends (`exit`) and GLib's next iteration opens another (`entry`).
    static func stopInDispatch(_ way: LifecycleMatrixGLibTests.Way) {
        let loop = EVRunLoop.current
        let context = g_main_context_new()
        let log = Log()
        let observer = EVObserver(activities: [.entry, .exit]) { _, activity in log.add(activity == .entry ? "entry" : "exit") }
        loop.add(observer, forMode: .default)
        let keepAlive = EVTimer(interval: 3_600, repeats: false) { _ in }
        loop.add(keepAlive, forMode: .default)
        let stop = GLibCall {
            log.add("stop")
            loop.stop()
            return false
        }
        attachTimeout(30, to: context, stop)
        switch way {
        case .hosted:
            let host = loop.host(context, in: [.common])
            let result = loop.run(mode: .default, for: .seconds(5))
            host.unhost()
            check(result == .stopped && log.entries == ["entry", "stop", "exit"],
                       "stop() in a hosted GLib dispatch: \(result), \(log.entries)")
        case .attached:
            let attachment = loop.attach(to: context)
            let mainLoop = g_main_loop_new(context, 0)
            // GLib's loop ends once the attachment opened the loop's run again (a second
            // entry), or after 5 s. Not at a fixed time: on a loaded machine the iteration
            // after the stop can come later than such a time, which ended GLib's loop first.
            let reopened = EVObserver(activities: .entry) { _, _ in
                if log.entries.filter({ $0 == "entry" }).count >= 2 { g_main_loop_quit(mainLoop) }
            }
            loop.add(reopened, forMode: .default)
            let limit = GLibCall {
                g_main_loop_quit(mainLoop)
                return false
            }
            attachTimeout(5_000, to: context, limit)
            g_main_loop_run(mainLoop)
            reopened.invalidate()
            attachment.detach()
            check(log.entries == ["entry", "stop", "exit", "entry", "exit"],
                       "stop() in a GLib dispatch, attached: \(log.entries)")
            withExtendedLifetime(limit) {}
            g_main_loop_unref(mainLoop)
        }
        keepAlive.invalidate()
        withExtendedLifetime(stop) {}
        g_main_context_unref(context)
    }

    /// A shutdown of a loop of `startThread(name:)` whose thread blocks in a GLib callback
    /// (hosted) until the stop reached the loop: the callback returns, every run ends, and the
    /// shutdown returns.
    static func shutdownInDispatch(sync: Bool) async {
        let loop = EVRunLoop.startThread(name: "glib shutdown")
        let inDispatch = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let log = Shared<[String]>([])
        loop.perform(inModes: [.common], label: "host") {
            let context = g_main_context_new()
            let host = loop.host(context, in: [.common])
            g_main_context_unref(context)  // the hosting holds it
            let call = GLibCall {
                inDispatch.signal()
                _ = release.wait(timeout: .now() + 10)
                log.value.append("dispatch returned")
                return false
            }
            attachTimeout(30, to: context, call)
            // The observer keeps the callback (and the hosting) as long as the loop keeps it,
            // and unhosts when the run ends, before the thread does (as the hosting requires:
            // the hosting's observers hold it until then).
            let exit = EVObserver(activities: .exit) { _, _ in
                withExtendedLifetime(call) { log.value.append("exit") }
                host.unhost()
            }
            loop.add(exit, forMode: .default)
        }
        check(inDispatch.wait(timeout: .now() + 10) == .success, "the GLib callback did not run within 10 s")
        Thread.detachNewThread {
            let deadline = ContinuousClock.now + .seconds(2)
            while !loop.isStopRequested && ContinuousClock.now < deadline { usleep(1_000) }
            release.signal()
        }
        let returned: Bool
        if sync {
            let ended = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                loop.syncShutdown()
                ended.signal()
            }
            returned = await Task.detached { ended.wait(timeout: .now() + 10) == .success }.value
        } else {
            let done = Shared(false)
            Task.detached {
                await loop.shutdown()
                done.value = true
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while !done.value && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
            returned = done.value
        }
        check(returned, "\(sync ? "syncShutdown()" : "shutdown()") inside a GLib dispatch did not return")
        check(log.value == ["dispatch returned", "exit"], "shutdown inside a GLib dispatch: \(log.value)")
    }

    /// A repeating 200 ms timer of the loop invalidated by a GLib callback at 30 ms never
    /// fires after; a later timer does.
    static func invalidateInDispatch(_ way: LifecycleMatrixGLibTests.Way) {
        let loop = EVRunLoop.current
        let context = g_main_context_new()
        let log = Log()
        let tick = EVTimer(interval: 0.2, repeats: true, label: "tick", block: EVRunLoop.isolated { (_: EVTimer) in
            log.add(log.entries.contains("invalidated") ? "tick after invalidate" : "tick")
        })
        let after = EVTimer(interval: 0.5, repeats: false, label: "after", block: EVRunLoop.isolated { (_: EVTimer) in
            log.add("after")
            loop.stop()
        })
        loop.add(tick, forMode: .default)
        loop.add(after, forMode: .default)
        let invalidate = GLibCall {
            tick.invalidate()
            log.add("invalidated")
            return false
        }
        attachTimeout(30, to: context, invalidate)
        switch way {
        case .hosted:
            let host = loop.host(context, in: [.common])
            loop.run(mode: .default, for: .seconds(5))
            host.unhost()
        case .attached:
            let attachment = loop.attach(to: context)
            let mainLoop = g_main_loop_new(context, 0)
            let limit = GLibCall {
                g_main_loop_quit(mainLoop)
                return false
            }
            attachTimeout(800, to: context, limit)
            g_main_loop_run(mainLoop)
            attachment.detach()
            withExtendedLifetime(limit) {}
            g_main_loop_unref(mainLoop)
        }
        check(log.entries.contains("invalidated") && log.entries.contains("after")
                && !log.entries.contains("tick after invalidate"),
              "invalidate() in a GLib dispatch, \(way.rawValue): \(log.entries)")
        withExtendedLifetime(invalidate) {}
        g_main_context_unref(context)
    }
}
