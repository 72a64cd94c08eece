import CGLib
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
}
