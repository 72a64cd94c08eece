import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib
import Testing

/// The standard error an exit test observed, as text ("" when the test did not run).
func standardError(_ result: ExitTest.Result?) -> String {
    result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
}

/// Hosting and attaching misused: each stops the program with a message naming the call.
@Suite("GLib misuse", .timeLimit(.minutes(10)))
struct GLibMisuseTests {
    @Test("hosting one context twice")
    func hostTwice() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = loopOfThisThread()
            let context = g_main_context_new()
            loop.host(context)
            loop.host(context, in: ["other"])
        }
        #expect(standardError(result).contains("EVRunLoop.host(_:in:): the GMainContext 0x"))
        #expect(standardError(result).contains("is hosted already"))
    }

    @Test("hosting a context another thread owns")
    func hostOwnedElsewhere() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = g_main_context_new()
            let address = UInt(bitPattern: context)
            let acquired = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                g_main_context_acquire(OpaquePointer(bitPattern: address))
                acquired.signal()
                sleep(60)  // keeps owning it
            }
            acquired.wait()
            loopOfThisThread().host(context)
        }
        #expect(standardError(result).contains(
            "EVRunLoop.host(_:in:): g_main_context_acquire failed: the GMainContext 0x"))
        #expect(standardError(result).contains("is owned by another thread"))
    }

    @Test("hosting from a thread that is not the loop's")
    func hostOffThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = loopOfThisThread()
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                loop.host(g_main_context_new())
                done.signal()
            }
            _ = done.wait(timeout: .now() + 60)
        }
        #expect(standardError(result).contains("EVRunLoop.host(_:in:): called off the loop's thread"))
    }

    @Test("hosting in no mode")
    func hostInNoMode() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            loopOfThisThread().host(g_main_context_new(), in: [])
        }
        #expect(standardError(result).contains("EVRunLoop.host(_:in:): modes is empty"))
    }

    @Test("hosting in a loop on a virtual clock")
    func hostInVirtualLoop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVRunLoop(clock: EVVirtualClock()).host(g_main_context_new())
        }
        #expect(standardError(result).contains("EVRunLoop.host(_:in:): an EVVirtualClock loop cannot host GLib"))
    }

    @Test("attaching one loop twice")
    func attachTwice() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = loopOfThisThread()
            loop.attach(to: g_main_context_new())
            loop.attach(to: g_main_context_new())
        }
        #expect(standardError(result).contains("EVRunLoop.attach(to:mode:priority:): the loop is attached already"))
    }

    @Test("attaching to a context another thread owns")
    func attachOwnedElsewhere() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = g_main_context_new()
            let address = UInt(bitPattern: context)
            let acquired = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                g_main_context_acquire(OpaquePointer(bitPattern: address))
                acquired.signal()
                sleep(60)  // keeps owning it
            }
            acquired.wait()
            loopOfThisThread().attach(to: context)
        }
        #expect(standardError(result).contains(
            "EVRunLoop.attach(to:mode:priority:): g_main_context_acquire failed: the GMainContext 0x"))
        #expect(standardError(result).contains("is owned by another thread"))
    }

    @Test("attaching a loop to the context it hosts, and hosting the context a loop is attached to")
    func hostAndAttachOneContext() async {
        let attach = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = loopOfThisThread()
            let context = g_main_context_new()
            loop.host(context)
            loop.attach(to: context)
        }
        #expect(standardError(attach).contains("EVRunLoop.attach(to:mode:priority:): the GMainContext 0x"))
        #expect(standardError(attach).contains("is hosted by a loop"))
        let host = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = loopOfThisThread()
            let context = g_main_context_new()
            loop.attach(to: context)
            loop.host(context)
        }
        #expect(standardError(host).contains("EVRunLoop.host(_:in:): a loop is attached to the GMainContext 0x"))
    }

    @Test("attaching a loop on a virtual clock")
    func attachVirtualLoop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVRunLoop(clock: EVVirtualClock()).attach(to: g_main_context_new())
        }
        #expect(standardError(result).contains("EVRunLoop.attach(to:mode:priority:): an EVVirtualClock loop has no descriptor"))
    }

    @Test("a context an attached loop owns, iterated on another thread")
    func attachedContextIteratedElsewhere() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = loopOfThisThread()
            let context = g_main_context_new()
            loop.attach(to: context)
            // Give the context away behind the attachment's back, then iterate it elsewhere.
            g_main_context_release(context)
            let address = UInt(bitPattern: context)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                g_main_context_iteration(OpaquePointer(bitPattern: address), 0)
                done.signal()
            }
            _ = done.wait(timeout: .now() + 60)
        }
        #expect(standardError(result).contains("GLib ran the loop's source (prepare) on another thread"))
    }
}
