import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib
import Testing

/// GLib's default context hosted in a loop: GLib's own `g_timeout_add`, `g_timeout_add_seconds`,
/// `g_idle_add` and `g_unix_fd_add` callbacks, run by `EVRunLoop.run`. Serialized: the
/// default context is the process's one, and one thread owns it at a time.
@Suite("Real time: GLib's default context hosted in a loop", .serialized, .timeLimit(.minutes(2)))
struct HostDefaultContextTests {
    @Test("g_idle_add, g_timeout_add, g_unix_fd_add and g_timeout_add_seconds callbacks run under run()")
    func defaultContextSourcesRun() async {
        let (log, timeoutAt, fdAt, secondsAt, result) = await onFreshThreadAwaiting {
            () -> ([String], Double, Double, Double, EVRunLoop.RunResult) in
            let loop = loopOfThisThread()
            let host = loop.host()
            defer { host.unhost() }
            let added = DefaultContextSources()
            defer { added.removeLeftovers() }
            let log = Log()
            let (readEnd, writeEnd) = makePipe()
            defer { close(readEnd); close(writeEnd) }
            let start = monotonicSeconds()
            var timeoutAt = 0.0, fdAt = 0.0, secondsAt = 0.0
            let idle = GLibCall { log.add("idle"); return false }
            let timeout = GLibCall {
                timeoutAt = monotonicSeconds() - start
                log.add("timeout")
                var byte: UInt8 = 1
                _ = write(writeEnd, &byte, 1)
                return false
            }
            let readable = GLibCall {
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
                fdAt = monotonicSeconds() - start
                log.add("fd \(byte)")
                return false
            }
            let seconds = GLibCall {
                secondsAt = monotonicSeconds() - start
                log.add("seconds")
                loop.stop()
                return false
            }
            added.add(g_idle_add(GLibCall.sourceFunc, idle.userData))
            added.add(g_timeout_add(100, GLibCall.sourceFunc, timeout.userData))
            added.add(g_unix_fd_add(readEnd, G_IO_IN, GLibCall.fdFunc, readable.userData))
            added.add(g_timeout_add_seconds(2, GLibCall.sourceFunc, seconds.userData))
            let result = loop.run(mode: .default, for: .seconds(10))
            withExtendedLifetime([idle, timeout, readable, seconds]) {}
            return (log.entries, timeoutAt, fdAt, secondsAt, result)
        }
        #expect(result == .stopped)
        #expect(log == ["idle", "timeout", "fd 1", "seconds"])
        #expect(timeoutAt >= 0.1 && timeoutAt < 1, "g_timeout_add(100) ran after \(timeoutAt) s")
        // The write woke the loop: the descriptor's callback did not wait for the next timeout.
        #expect(fdAt - timeoutAt < 1, "g_unix_fd_add's callback ran \(fdAt - timeoutAt) s after the write")
        // GLib moves a seconds timeout's expiry to its per-process phase of the second (down
        // when within the first quarter of a second after it, up otherwise): 1.75 to 2.75 s.
        #expect(secondsAt >= 1.75 && secondsAt < 5, "g_timeout_add_seconds(2) ran after \(secondsAt) s")
    }

    @Test("a run in a mode GLib is not hosted in runs none of GLib's sources; the next hosted run does")
    func privateModeKeepsGLibOut() async {
        let (inPrivate, afterwards) = await onFreshThreadAwaiting { () -> ([String], [String]) in
            let loop = loopOfThisThread()
            let host = loop.host()
            defer { host.unhost() }
            let added = DefaultContextSources()
            defer { added.removeLeftovers() }
            let log = Log()
            let idle = GLibCall { log.add("idle"); return false }
            let timeout = GLibCall { log.add("timeout"); return false }
            added.add(g_idle_add(GLibCall.sourceFunc, idle.userData))
            added.add(g_timeout_add(10, GLibCall.sourceFunc, timeout.userData))
            let keepAlive = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(keepAlive, forMode: "private")
            defer { keepAlive.invalidate() }
            loop.run(mode: "private", for: .milliseconds(200))
            let inPrivate = log.entries
            loop.run(mode: .default, for: .milliseconds(200))
            withExtendedLifetime([idle, timeout]) {}
            return (inPrivate, log.entries)
        }
        #expect(inPrivate == [])
        // Both are due: GLib dispatches the higher priority (the timeout) first.
        #expect(afterwards == ["timeout", "idle"])
    }

    @Test("a GLib callback runs the loop again: GLib's sources run in the nested run")
    func nestedRunInsideAGLibCallback() {
        let log = onFreshThread { () -> [String] in
            let loop = loopOfThisThread()
            let host = loop.host()
            defer { host.unhost() }
            let added = DefaultContextSources()
            defer { added.removeLeftovers() }
            let log = Log()
            let outer = GLibCall {
                log.add("outer begin")
                log.add("nested \(loop.run(mode: .default, for: .seconds(5)))")
                log.add("outer end")
                loop.stop()
                return false
            }
            let inner = GLibCall {
                log.add("inner")
                loop.stop()
                return false
            }
            added.add(g_timeout_add(10, GLibCall.sourceFunc, outer.userData))
            added.add(g_timeout_add(60, GLibCall.sourceFunc, inner.userData))
            log.add("outer \(loop.run(mode: .default, for: .seconds(5)))")
            withExtendedLifetime([outer, inner]) {}
            return log.entries
        }
        #expect(log == ["outer begin", "inner", "nested stopped", "outer end", "outer stopped"])
    }

    @Test("a RunLoopKit timer runs the loop again: GLib's sources run in the nested run")
    func nestedRunInsideATimer() {
        let log = onFreshThread { () -> [String] in
            let loop = loopOfThisThread()
            let host = loop.host()
            defer { host.unhost() }
            let added = DefaultContextSources()
            defer { added.removeLeftovers() }
            let log = Log()
            let glib = GLibCall {
                log.add("glib")
                loop.stop()
                return false
            }
            let timer = EVTimer(interval: 0.01, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in
                log.add("timer")
                added.add(g_timeout_add(30, GLibCall.sourceFunc, glib.userData))
                log.add("nested \(loop.run(mode: .default, for: .seconds(5)))")
                loop.stop()
            })
            loop.add(timer, forMode: .default)
            log.add("outer \(loop.run(mode: .default, for: .seconds(5)))")
            withExtendedLifetime(glib) {}
            return log.entries
        }
        #expect(log == ["timer", "glib", "nested stopped", "outer stopped"])
    }

    @Test("a GMainLoop run inside a GLib callback (a modal dialog's loop) iterates the hosted context")
    func gMainLoopInsideACallback() {
        let log = onFreshThread { () -> [String] in
            let loop = loopOfThisThread()
            let host = loop.host()
            defer { host.unhost() }
            let added = DefaultContextSources()
            defer { added.removeLeftovers() }
            let log = Log()
            let mainLoop = g_main_loop_new(nil, 0)
            defer { g_main_loop_unref(mainLoop) }
            let modal = GLibCall {
                log.add("modal begin")
                g_main_loop_run(mainLoop)
                log.add("modal end")
                loop.stop()
                return false
            }
            let quit = GLibCall {
                log.add("quit")
                g_main_loop_quit(mainLoop)
                return false
            }
            added.add(g_timeout_add(10, GLibCall.sourceFunc, modal.userData))
            added.add(g_timeout_add(50, GLibCall.sourceFunc, quit.userData))
            log.add("\(loop.run(mode: .default, for: .seconds(5)))")
            withExtendedLifetime([modal, quit]) {}
            return log.entries
        }
        #expect(log == ["modal begin", "quit", "modal end", "stopped"])
    }
}

/// Hosting a context of its own (`g_main_context_new`): ownership, waking from another
/// thread, unhosting, and waking only when GLib has work.
@Suite("Real time: a GLib context hosted in a loop", .timeLimit(.minutes(2)))
struct HostContextTests {
    @Test("hosting acquires the context; unhosting releases it and leaves no timer, source or observer")
    func unhostLeavesGLibAsItWas() {
        let (owned, released, emptyAfter, glibTraceLines, ranElsewhere) = onFreshThread {
            () -> (Bool, Bool, EVRunLoop.RunResult, [String], Bool) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let loop = loopOfThisThread()
            let host = loop.host(context)
            let owned = g_main_context_is_owner(context) != 0 && host.isHosting
            let fired = GLibCall { loop.stop(); return false }
            attachTimeout(10, to: context, fired)
            loop.run(mode: .default, for: .seconds(5))
            host.unhost()
            host.unhost()  // again: nothing
            let released = g_main_context_is_owner(context) == 0 && !host.isHosting
            // Nothing of the hosting is left: the default mode is empty again.
            let emptyAfter = loop.run(mode: .default, for: .seconds(5))
            // And no observer is called: a traced run shows no GLib callout.
            let keepAlive = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            loop.trace = EVRunLoop.Trace()
            loop.run(mode: .default, for: .milliseconds(20))
            let lines = loop.trace?.lines.filter { $0.contains("GLib") } ?? ["no trace"]
            loop.trace = nil
            keepAlive.invalidate()
            // Another thread can own and iterate the context now.
            let ran = Log()
            let idle = GLibCall { ran.add("idle"); return false }
            attachIdle(to: context, idle)
            let contextAddress = UInt(bitPattern: context)
            let iterated = onFreshThread { () -> Bool in
                let context = OpaquePointer(bitPattern: contextAddress)
                return g_main_context_iteration(context, 0) != 0
            }
            withExtendedLifetime([fired, idle]) {}
            return (owned, released, emptyAfter, lines, iterated && ran.entries == ["idle"])
        }
        #expect(owned)
        #expect(released)
        #expect(emptyAfter == .finished)
        #expect(glibTraceLines == [])
        #expect(ranElsewhere)
    }

    @Test("unhosting from a GLib callback releases the context once GLib's dispatch returns; GLib runs no more")
    func unhostInsideACallback() async {
        let (ownedInCallback, ownedAfter, ranAfter) = await onFreshThreadAwaiting { () -> (Bool, Bool, Int) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let loop = loopOfThisThread()
            let host = loop.host(context)
            var ownedInCallback = false
            var count = 0
            let unhosting = GLibCall {
                host.unhost()
                ownedInCallback = g_main_context_is_owner(context) != 0
                loop.stop()
                return false
            }
            let repeating = GLibCall { count += 1; return true }
            attachTimeout(20, to: context, unhosting)
            let every5ms = attachTimeout(5, to: context, repeating)
            defer { g_source_destroy(every5ms) }
            loop.run(mode: .default, for: .seconds(5))
            let countAtUnhost = count
            let keepAlive = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(100))
            keepAlive.invalidate()
            withExtendedLifetime([unhosting, repeating]) {}
            return (ownedInCallback, g_main_context_is_owner(context) != 0, count - countAtUnhost)
        }
        #expect(ownedInCallback, "released while GLib was still dispatching")
        #expect(!ownedAfter)
        #expect(ranAfter == 0)
    }

    @Test("a GLib idle that stays runs once a pass, without a wait per iteration")
    func busyGLibDoesNotWaitPerIteration() async {
        let (callbacks, wakeups, passes) = await onFreshThreadAwaiting { () -> (Int, Int, Int) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let loop = loopOfThisThread()
            let host = loop.host(context)
            defer { host.unhost() }
            var callbacks = 0
            let idle = GLibCall { callbacks += 1; return true }
            let source = g_idle_source_new()!
            g_source_set_callback(source, GLibCall.sourceFunc, idle.userData, nil)
            g_source_attach(source, context)
            defer { g_source_destroy(source); g_source_unref(source) }
            loop.resetStatistics()
            loop.run(mode: .default, for: .milliseconds(200))
            withExtendedLifetime(idle) {}
            return (callbacks, loop.statistics.wakeups, loop.statistics.passes)
        }
        #expect(callbacks > 100)
        // The first iteration waits (for nothing: GLib's idle is ready); the rest poll.
        #expect(wakeups <= 2, "\(wakeups) waits for \(callbacks) idle callbacks")
        #expect(passes <= callbacks + 3)
    }

    @Test("hosted in named modes: GLib runs in a run of each, and not in a run of another")
    func namedModes() async {
        let ran = await onFreshThreadAwaiting { () -> [String] in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let loop = loopOfThisThread()
            let host = loop.host(context, in: ["tracking", "modal"])
            defer { host.unhost() }
            let log = Log()
            let keepAlive = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(keepAlive, forMode: .default)
            defer { keepAlive.invalidate() }
            var calls: [GLibCall] = []
            for mode: EVRunLoop.Mode in [.default, "tracking", .default, "modal"] {
                let call = GLibCall { log.add("idle of \(mode) in \(loop.currentMode!)"); loop.stop(); return false }
                calls.append(call)
                attachIdle(to: context, call)
                loop.run(mode: mode, for: .milliseconds(100))
                log.add("run \(mode)")
            }
            withExtendedLifetime(calls) {}
            return log.entries
        }
        // The idles attached before the default runs wait for the next hosted run.
        #expect(ran == [
            "run kCFRunLoopDefaultMode",
            "idle of kCFRunLoopDefaultMode in tracking", "idle of tracking in tracking", "run tracking",
            "run kCFRunLoopDefaultMode",
            "idle of kCFRunLoopDefaultMode in modal", "idle of modal in modal", "run modal",
        ])
    }

    @Test("with nothing due, a hosted context costs no wake: one wait for a one-second run")
    func idleHostDoesNotWake() async {
        let (wakeups, passes, timerFires) = await onFreshThreadAwaiting { () -> (Int, Int, Int) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let loop = loopOfThisThread()
            let host = loop.host(context)
            defer { host.unhost() }
            let far = GLibCall { false }
            let timeout = attachTimeout(60_000, to: context, far)
            defer { g_source_destroy(timeout) }
            loop.resetStatistics()
            loop.run(mode: .default, for: .seconds(1))
            let statistics = loop.statistics
            withExtendedLifetime(far) {}
            return (statistics.wakeups, statistics.passes, statistics.timerFires)
        }
        #expect(wakeups == 1)
        #expect(passes == 1)
        #expect(timerFires == 0)
    }

    @Test("a source attached from another thread wakes the hosting loop (GLib's wakeup descriptor)")
    func crossThreadAttachWakesTheLoop() async {
        let (ranOnLoopThread, latency) = await onFreshThreadAwaiting { () -> (Bool, Double) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let loop = loopOfThisThread()
            let host = loop.host(context)
            defer { host.unhost() }
            let loopThread = pthread_self()
            var ranOnLoopThread = false
            var ranAt = 0.0
            let idle = GLibCall {
                ranOnLoopThread = pthread_equal(pthread_self(), loopThread) != 0
                ranAt = monotonicSeconds()
                loop.stop()
                return false
            }
            let contextAddress = UInt(bitPattern: context)
            let idleAddress = UInt(bitPattern: idle.userData)
            let sentAt = Shared(0.0)
            let sender = Thread {
                usleep(100_000)
                let source = g_idle_source_new()
                g_source_set_callback(source, GLibCall.sourceFunc, UnsafeMutableRawPointer(bitPattern: idleAddress), nil)
                sentAt.value = monotonicSeconds()
                g_source_attach(source, OpaquePointer(bitPattern: contextAddress))
                g_source_unref(source)
            }
            sender.start()
            loop.run(mode: .default, for: .seconds(10))
            withExtendedLifetime(idle) {}
            return (ranOnLoopThread, ranAt - sentAt.value)
        }
        #expect(ranOnLoopThread)
        #expect(latency >= 0 && latency < 2, "the idle ran \(latency) s after its attach")
    }
}
