import CRunLoopKitGLib
import Foundation
import Glibc

/// The scenarios besides the descriptor matrix: timeouts, idles at several priorities,
/// sources added and removed from other threads, descriptors closed and their number reused
/// within one iteration, nested iterations, and `g_source_set_can_recurse`.
extension GLibScenario {
    static let sourceScenarios: [GLibScenario] = timeoutScenarios + idleScenarios + threadScenarios
        + reuseScenarios + nestingScenarios

    static let timeoutScenarios: [GLibScenario] = [
        GLibScenario(name: "a timeout added again from its own callback, five times") { run in
            var count = 0
            func again() {
                run.timeout(UInt32(10 * count)) {
                    count += 1
                    run.log("timeout \(count)")
                    if count < 5 { again() }
                    return false
                }
            }
            again()
        },
        // Due in the same iteration (a callback blocks past their time): GLib dispatches only
        // the highest priority ready.
        GLibScenario(name: "timeouts due together at three priorities") { run in
            run.timeout(10, priority: G_PRIORITY_HIGH) {
                run.timeout(10, priority: G_PRIORITY_DEFAULT_IDLE) { run.log("default idle"); return false }
                run.timeout(10, priority: G_PRIORITY_DEFAULT) { run.log("default"); return false }
                run.timeout(10, priority: G_PRIORITY_HIGH) { run.log("high"); return false }
                usleep(30_000)
                return false
            }
        },
        GLibScenario(name: "a repeating 15 ms timeout, five times") { run in
            var count = 0
            run.timeout(15) {
                count += 1
                run.log("tick \(count)")
                return count < 5
            }
        },
    ]

    static let idleScenarios: [GLibScenario] = [
        GLibScenario(name: "idles at four priorities, two staying three times") { run in
            var highIdle = 0, defaultIdle = 0
            run.idle(priority: G_PRIORITY_LOW) { run.log("low"); return false }
            run.idle(priority: G_PRIORITY_DEFAULT_IDLE) {
                defaultIdle += 1
                run.log("default idle \(defaultIdle)")
                return defaultIdle < 3
            }
            run.idle(priority: G_PRIORITY_HIGH_IDLE) {
                highIdle += 1
                run.log("high idle \(highIdle)")
                return highIdle < 3
            }
            run.idle(priority: G_PRIORITY_DEFAULT) { run.log("default"); return false }
        },
        // An idle that stays must not keep a timeout of a higher priority from running.
        GLibScenario(name: "an idle that stays beside a 20 ms timeout") { run in
            var timedOut = false
            var first = true
            run.idle(priority: G_PRIORITY_DEFAULT_IDLE) {
                if first { run.log("idle"); first = false }
                if timedOut { run.log("idle after the timeout") }
                return !timedOut
            }
            run.timeout(20) { run.log("timeout"); timedOut = true; return false }
        },
    ]

    static let threadScenarios: [GLibScenario] = [
        GLibScenario(name: "an idle and a timeout attached from another thread") { run in
            let address = run.contextAddress
            let idleRan = DispatchSemaphore(value: 0)
            let idle = GLibCall { run.log("idle from a thread"); idleRan.signal(); return false }
            let timeout = GLibCall { run.log("timeout from a thread"); return false }
            run.keep(idle)
            run.keep(timeout)
            let idleData = UInt(bitPattern: idle.userData), timeoutData = UInt(bitPattern: timeout.userData)
            run.timeout(10) {
                run.log("start thread")
                Thread.detachNewThread {
                    let context = OpaquePointer(bitPattern: address)
                    usleep(20_000)
                    let source = g_idle_source_new()!
                    g_source_set_callback(source, GLibCall.sourceFunc, UnsafeMutableRawPointer(bitPattern: idleData), nil)
                    g_source_attach(source, context)
                    g_source_unref(source)
                    idleRan.wait()
                    let timer = g_timeout_source_new(10)!
                    g_source_set_callback(timer, GLibCall.sourceFunc, UnsafeMutableRawPointer(bitPattern: timeoutData), nil)
                    g_source_attach(timer, context)
                    g_source_unref(timer)
                }
                return false
            }
        },
        // The thread destroys a watch, then raises its descriptor and attaches an idle: the
        // watch must not run.
        GLibScenario(name: "a watch destroyed from another thread, then its descriptor raised") { run in
            let pair = DescriptorPair.pipe()
            run.atEnd { pair.close() }
            let doomed = run.watch(pair.watched, G_IO_IN) { _ in run.log("destroyed watch ran"); return false }
            g_source_ref(doomed)
            let address = UInt(bitPattern: doomed), contextAddress = run.contextAddress
            let after = GLibCall { run.log("idle after the destroy"); return false }
            run.keep(after)
            let afterData = UInt(bitPattern: after.userData)
            run.timeout(10) {
                run.log("start thread")
                Thread.detachNewThread {
                    usleep(20_000)
                    let source = UnsafeMutablePointer<GSource>(bitPattern: address)
                    g_source_destroy(source)
                    g_source_unref(source)
                    writeByte(pair)
                    let idle = g_idle_source_new()!
                    g_source_set_callback(idle, GLibCall.sourceFunc, UnsafeMutableRawPointer(bitPattern: afterData), nil)
                    g_source_attach(idle, OpaquePointer(bitPattern: contextAddress))
                    g_source_unref(idle)
                }
                return false
            }
        },
    ]

    /// A watch removed, its descriptor closed and a new one (the same number) watched, in one
    /// GLib callback; the new one is raised 30 ms later.
    static func reuse(_ kind: String, make: @escaping @Sendable () -> DescriptorPair,
                      raise: @escaping @Sendable (DescriptorPair) -> Void) -> GLibScenario {
        GLibScenario(name: "a \(kind) closed and its number reused within one iteration") { run in
            let first = make()
            let old = run.watch(first.watched, G_IO_IN) { _ in run.log("old watch"); return false }
            var second: DescriptorPair?
            run.atEnd { second?.close() }
            run.timeout(20) {
                g_source_destroy(old)
                // The old descriptor closed and its number given to a new one: dup2 does both
                // at once, so that no other thread of the test process takes the number.
                let made = make()
                let number = dup2(made.watched, first.watched)
                let fresh = DescriptorPair(watched: number, peer: made.peer == made.watched ? number : made.peer)
                if made.peer != made.watched { first.closePeer() }
                Glibc.close(made.watched)
                second = fresh
                run.log(number == first.watched ? "reused" : "another number")
                run.watch(fresh.watched, G_IO_IN) { _ in
                    run.log("new watch")
                    return false
                }
                return false
            }
            run.timeout(50) {
                run.log("raise")
                if let second { raise(second) }
                return false
            }
        }
    }

    static let reuseScenarios: [GLibScenario] = [
        reuse("pipe", make: DescriptorPair.pipe, raise: writeByte),
        reuse("socket", make: DescriptorPair.socketPair, raise: writeByte),
        reuse("eventfd", make: DescriptorPair.eventFD, raise: addOne),
        reuse("timerfd", make: DescriptorPair.timerFD, raise: armIn10ms),
    ]

    static let nestingScenarios: [GLibScenario] = [
        GLibScenario(name: "a callback runs g_main_context_iteration: ready sources run inside") { run in
            run.timeout(10) {
                run.log("outer begin")
                run.idle(priority: G_PRIORITY_DEFAULT) { run.log("idle inside"); return false }
                g_main_context_iteration(run.context, 0)
                run.log("outer end")
                return false
            }
        },
        GLibScenario(name: "a callback runs a GMainLoop (a modal loop): timeouts run inside") { run in
            run.timeout(10) {
                run.log("outer begin")
                let modal = g_main_loop_new(run.context, 0)!
                run.timeout(10) { run.log("inside"); return false }
                run.timeout(30) { run.log("quit"); g_main_loop_quit(modal); return false }
                g_main_loop_run(modal)
                g_main_loop_unref(modal)
                run.log("outer end")
                return false
            }
        },
        GLibScenario(name: "a callback waits in g_main_context_iteration for a descriptor") { run in
            let pair = DescriptorPair.pipe()
            run.atEnd { pair.close() }
            run.timeout(10) {
                run.log("outer begin")
                var ran = false
                run.timeout(5) { run.log("nested timeout"); ran = true; return false }
                while !ran { g_main_context_iteration(run.context, 1) }
                run.timeout(10) { run.log("write"); writeByte(pair); return false }
                var read = false
                run.watch(pair.watched, G_IO_IN) { _ in run.log("readable inside"); read = true; return false }
                while !read { g_main_context_iteration(run.context, 1) }
                run.log("outer end")
                return false
            }
        },
        recursion(canRecurse: true),
        recursion(canRecurse: false),
    ]

    /// An idle that iterates the context from its callback: with `g_source_set_can_recurse`
    /// it runs again inside; without, GLib blocks it there.
    static func recursion(canRecurse: Bool) -> GLibScenario {
        GLibScenario(name: "g_source_set_can_recurse(\(canRecurse ? "TRUE" : "FALSE")): an idle iterating the context") { run in
            var depth = 0
            var calls = 0
            run.idle(priority: G_PRIORITY_DEFAULT, canRecurse: canRecurse) {
                depth += 1
                calls += 1
                run.log("idle \(calls) at depth \(depth)")
                if calls == 1 { g_main_context_iteration(run.context, 0) }
                depth -= 1
                return calls < 2
            }
        }
    }
}
