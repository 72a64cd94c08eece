import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib
import Synchronization
import Testing

/// A loop attached to a GLib context of its own, GLib's loop (`g_main_loop_run`) in control.
@Suite("Real time: a loop attached to a GLib context", .timeLimit(.minutes(2)))
struct AttachTests {
    @Test("under g_main_loop_run, the loop's timers, sources, observers and blocks run on its thread")
    func everythingRunsUnderGLib() async {
        let (seen, lateness, onLoopThread) = await onFreshThreadAwaiting { () -> (Set<String>, Double, Bool) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let mainLoop = g_main_loop_new(context, 0)
            defer { g_main_loop_unref(mainLoop) }
            let loop = loopOfThisThread()
            let attachment = loop.attach(to: context)
            defer { attachment.detach() }
            let expected: Set<String> = ["timer", "frameTimer", "manualSource", "fdSource", "observer", "block"]
            var seen: Set<String> = []
            var onLoopThread = true
            let loopThread = pthread_self()
            let saw: @Sendable (String) -> Void = EVRunLoop.isolated { (what: String) in
                onLoopThread = onLoopThread && pthread_equal(pthread_self(), loopThread) != 0
                seen.insert(what)
                if seen == expected { g_main_loop_quit(mainLoop) }
            }
            let start = monotonicSeconds()
            var lateness = -1.0
            let timer = EVTimer(interval: 0.1, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in
                lateness = monotonicSeconds() - start - 0.1
                saw("timer")
            })
            loop.add(timer, forMode: .default)
            let frames = EVFrameTimer(framesPerSecond: 60) { frameTimer in
                saw("frameTimer")
                frameTimer.invalidate()
            }
            loop.add(frames, forMode: .default)
            let manual = EVSource { _ in saw("manualSource") }
            loop.add(manual, forMode: .default)
            defer { manual.invalidate() }
            let (readEnd, writeEnd) = makePipe()
            defer { close(writeEnd) }
            let readable = try! EVSource(fileDescriptor: readEnd, closesDescriptor: true) { _ in
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
                saw("fdSource")
            }
            loop.add(readable, forMode: .default)
            defer { readable.invalidate() }
            let observer = EVObserver(activities: .afterWaiting, repeats: false) { _, _ in saw("observer") }
            loop.add(observer, forMode: .default)
            Thread.detachNewThread {
                usleep(150_000)
                manual.signal()
                loop.wakeUp()
                var byte: UInt8 = 1
                _ = write(writeEnd, &byte, 1)
                loop.perform { saw("block") }
            }
            let limit = GLibCall { g_main_loop_quit(mainLoop); return false }
            let limitSource = attachTimeout(10_000, to: context, limit)
            g_main_loop_run(mainLoop)
            g_source_destroy(limitSource)
            withExtendedLifetime(limit) {}
            return (seen, lateness, onLoopThread)
        }
        #expect(seen == ["timer", "frameTimer", "manualSource", "fdSource", "observer", "block"])
        #expect(onLoopThread)
        #expect(lateness >= 0 && lateness < 1, "a 100 ms timer fired \(lateness) s late")
    }

    @Test("with nothing due, GLib sleeps: an attached loop runs no pass in an idle second")
    func idleAttachedLoopDoesNotWake() async {
        let (passes, timerFires) = await onFreshThreadAwaiting { () -> (Int, Int) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let mainLoop = g_main_loop_new(context, 0)
            defer { g_main_loop_unref(mainLoop) }
            let loop = loopOfThisThread()
            let far = EVTimer(interval: 60, repeats: false) { _ in }
            loop.add(far, forMode: .default)
            defer { far.invalidate() }
            let attachment = loop.attach(to: context)
            defer { attachment.detach() }
            // One iteration to open the polled run, then a second of nothing.
            g_main_context_iteration(context, 0)
            loop.resetStatistics()
            let quit = GLibCall { g_main_loop_quit(mainLoop); return false }
            attachTimeout(1000, to: context, quit)
            g_main_loop_run(mainLoop)
            withExtendedLifetime(quit) {}
            return (loop.statistics.passes, loop.statistics.timerFires)
        }
        #expect(passes <= 2, "\(passes) passes in an idle second")
        #expect(timerFires == 0)
    }

    @Test("detach() stops GLib from running the loop and releases the context; from a callout, after the pass")
    func detachStopsIt() async {
        let (firedAfterDetach, ownedAfter, attachedAfter) = await onFreshThreadAwaiting { () -> (Bool, Bool, Bool) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let mainLoop = g_main_loop_new(context, 0)
            defer { g_main_loop_unref(mainLoop) }
            let loop = loopOfThisThread()
            let attachment = loop.attach(to: context)
            // A callout detaches; GLib's loop goes on, the RunLoopKit loop does not.
            let detaching = EVTimer(interval: 0.02, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in
                attachment.detach()
            })
            loop.add(detaching, forMode: .default)
            var firedAfterDetach = false
            let later = EVTimer(interval: 0.1, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in
                firedAfterDetach = true
            })
            loop.add(later, forMode: .default)
            defer { later.invalidate() }
            let quit = GLibCall { g_main_loop_quit(mainLoop); return false }
            attachTimeout(300, to: context, quit)
            g_main_loop_run(mainLoop)
            withExtendedLifetime(quit) {}
            return (firedAfterDetach, g_main_context_is_owner(context) != 0, attachment.isAttached)
        }
        #expect(!firedAfterDetach)
        #expect(!ownedAfter)
        #expect(!attachedAfter)
    }

    @Test("stop() ends the loop's run; GLib's next iteration opens another, so timers go on")
    func stopThenGoOn() {
        let fires = onFreshThread { () -> Int in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            let mainLoop = g_main_loop_new(context, 0)
            defer { g_main_loop_unref(mainLoop) }
            let loop = loopOfThisThread()
            let attachment = loop.attach(to: context)
            defer { attachment.detach() }
            var fires = 0
            let timer = EVTimer(interval: 0.02, repeats: true, block: EVRunLoop.isolated { (timer: EVTimer) in
                fires += 1
                loop.stop()
                if fires == 3 {
                    timer.invalidate()
                    g_main_loop_quit(mainLoop)
                }
            })
            loop.add(timer, forMode: .default)
            let limit = GLibCall { g_main_loop_quit(mainLoop); return false }
            let limitSource = attachTimeout(10_000, to: context, limit)
            g_main_loop_run(mainLoop)
            g_source_destroy(limitSource)
            withExtendedLifetime(limit) {}
            return fires
        }
        #expect(fires == 3)
    }

    @Test("GLib iterated inside a callout of the loop's own run (not the polled one) leaves the loop alone")
    func glibIteratedInsideTheLoopsOwnRun() async {
        await #expect(processExitsWith: .success) {
            let context = g_main_context_new()
            let loop = loopOfThisThread()
            let attachment = loop.attach(to: context)
            let ran = Log()
            let idle = GLibCall { ran.add("idle"); return false }
            let timer = EVTimer(interval: 0.01, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in
                attachIdle(to: context, idle)
                // The program runs the loop itself; GLib's iteration here must not drive it.
                while g_main_context_iteration(context, 0) != 0 {}
                loop.stop()
            })
            loop.add(timer, forMode: .default)
            let result = loop.run(mode: .default, for: .seconds(5))
            attachment.detach()
            withExtendedLifetime(idle) {}
            exit(result == .stopped && ran.entries == ["idle"] ? 0 : 1)
        }
    }

    @Test("a dispatch leaves no GLib wakeup behind: the next iteration finds nothing ready")
    func dispatchLeavesNoWakeup() {
        let ready = onFreshThread { () -> [Int32] in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            g_main_context_set_poll_func(context, PollCounter.poll)
            let loop = loopOfThisThread()
            let attachment = loop.attach(to: context)
            defer { attachment.detach() }
            var ready: [Int32] = []
            for _ in 0..<5 {
                let ran = Shared(false)
                loop.perform { ran.value = true }
                loop.wakeUp()
                while !ran.value { g_main_context_iteration(context, 1) }
                // Before the fix GLib blocked the source while dispatching it, and the
                // block and unblock each signalled the context's wakeup descriptor.
                g_main_context_iteration(context, 0)
                ready.append(PollCounter.lastResult.load(ordering: .relaxed))
            }
            return ready
        }
        #expect(ready == [0, 0, 0, 0, 0])
    }

    @Test("a GMainLoop run inside a callout of the attached loop runs no RunLoopKit work and does not spin")
    func modalLoopInsideACallout() async {
        let (polls, firesInside) = await onFreshThreadAwaiting { () -> (Int, Int) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            g_main_context_set_poll_func(context, PollCounter.poll)
            let outer = g_main_loop_new(context, 0)
            defer { g_main_loop_unref(outer) }
            let loop = loopOfThisThread()
            let attachment = loop.attach(to: context)
            defer { attachment.detach() }
            var fires = 0
            let ticker = EVTimer(interval: 0.02, repeats: true, block: EVRunLoop.isolated { (_: EVTimer) in fires += 1 })
            loop.add(ticker, forMode: .default)
            defer { ticker.invalidate() }
            var polls = -1
            var firesInside = -1
            let modal = g_main_loop_new(context, 0)
            defer { g_main_loop_unref(modal) }
            let quitModal = GLibCall { g_main_loop_quit(modal); return false }
            let opener = EVTimer(interval: 0.05, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in
                // A modal dialog's loop, 0.2 s, while the 20 ms ticker falls due ten times.
                attachTimeout(200, to: context, quitModal)
                let fires0 = fires
                PollCounter.calls.store(0, ordering: .relaxed)
                g_main_loop_run(modal)
                polls = PollCounter.calls.load(ordering: .relaxed)
                firesInside = fires - fires0
                g_main_loop_quit(outer)
            })
            loop.add(opener, forMode: .default)
            g_main_loop_run(outer)
            withExtendedLifetime(quitModal) {}
            return (polls, firesInside)
        }
        #expect(firesInside == 0)
        #expect(polls >= 1 && polls <= 20)
    }

    @Test("GLib iterated with a wait inside a callout of the loop's own run sleeps while the loop's descriptor is ready")
    func blockingIterationInsideTheLoopsOwnRun() async {
        let (polls, iterations) = await onFreshThreadAwaiting { () -> (Int, Int) in
            let context = g_main_context_new()
            defer { g_main_context_unref(context) }
            g_main_context_set_poll_func(context, PollCounter.poll)
            let loop = loopOfThisThread()
            let attachment = loop.attach(to: context)
            defer { attachment.detach() }
            // A RunLoopKit descriptor that stays readable: the loop's descriptor is readable too.
            let (readEnd, writeEnd) = makePipe()
            defer { close(readEnd); close(writeEnd) }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
            let readable = try! EVSource(fileDescriptor: readEnd, for: .read) { _ in }
            loop.add(readable, forMode: .default)
            defer { readable.invalidate() }
            var polls = -1
            var iterations = 0
            let done = Shared(false)
            let quit = GLibCall { done.value = true; return false }
            let timer = EVTimer(interval: 0.01, repeats: false, block: EVRunLoop.isolated { (_: EVTimer) in
                // The program runs the loop itself and, in a callout, GLib for 200 ms.
                attachTimeout(200, to: context, quit)
                PollCounter.calls.store(0, ordering: .relaxed)
                while !done.value {
                    g_main_context_iteration(context, 1)
                    iterations += 1
                }
                polls = PollCounter.calls.load(ordering: .relaxed)
                loop.stop()
            })
            loop.add(timer, forMode: .default)
            loop.run(mode: .default, for: .seconds(5))
            withExtendedLifetime(quit) {}
            return (polls, iterations)
        }
        // GLib's own loop with nothing of GLib's ready: one iteration, woken by the timeout.
        #expect(polls >= 1 && polls <= 20, "\(polls) polls, \(iterations) iterations in 0.2 s")
    }
}

/// A `GPollFunc` that counts its calls and keeps its last result (the ready descriptors).
enum PollCounter {
    static let calls = Atomic<Int>(0)
    static let lastResult = Atomic<Int32>(0)
    static let poll: GPollFunc = { fds, count, timeout in
        let result = g_poll(fds, count, timeout)
        calls.add(1, ordering: .relaxed)
        lastResult.store(result, ordering: .relaxed)
        return result
    }
}
