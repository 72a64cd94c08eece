import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib
import Testing

/// The CPU time of one GLib iteration beside idle descriptor watches, hosted and under
/// GLib's own loop: printed for ARCHITECTURE.md's choice of how the host watches GLib's
/// descriptors (`swift test --skip-build --filter GLibIterationCost`). It asserts what ran,
/// never a speed.
@Suite("Real time: GLibIterationCost", .serialized, .timeLimit(.minutes(3)))
struct GLibIterationCostTests {
    @Test("a 1 ms GLib timeout beside 0, 200 and 1,000 idle descriptor watches", arguments: [0, 200, 1_000])
    func iterationCost(watches: Int) async {
        let iterations = 400
        let own = await measure(watches: watches, iterations: iterations, hosted: false)
        let hosted = await measure(watches: watches, iterations: iterations, hosted: true)
        #expect(own.ticks == iterations && hosted.ticks == iterations)
        let ratio = hosted.microseconds / own.microseconds
        print("GLibIterationCost: \(watches) idle watches: g_main_loop_run \(format(own.microseconds)) µs, "
              + "hosted \(format(hosted.microseconds)) µs per iteration (\(format(ratio))x)")
    }

    private func format(_ value: Double) -> String { String(format: "%.2f", value) }

    /// Thread CPU time per iteration of `iterations` 1 ms timeouts, `watches` eventfds watched
    /// for reading and never written.
    private func measure(watches: Int, iterations: Int, hosted: Bool) async -> (ticks: Int, microseconds: Double) {
        await onFreshThreadAwaiting { () -> (Int, Double) in
            let context = g_main_context_new()!
            defer { g_main_context_unref(context) }
            raiseDescriptorLimit()
            var descriptors: [Int32] = []
            var sources: [UnsafeMutablePointer<GSource>] = []
            let never = GLibCall { true }
            for _ in 0..<watches {
                let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
                descriptors.append(fd)
                sources.append(attachUnixFD(fd, G_IO_IN, to: context, never))
            }
            let main = g_main_loop_new(context, 0)!
            defer { g_main_loop_unref(main) }
            let loop = loopOfThisThread()
            var ticks = 0
            var started = 0.0
            let tick = GLibCall {
                if ticks == 0 { started = threadCPUSeconds() }
                ticks += 1
                guard ticks < iterations + 1 else {
                    if hosted { loop.stop() } else { g_main_loop_quit(main) }
                    return false
                }
                return true
            }
            attachTimeout(1, to: context, tick)
            var elapsed = 0.0
            if hosted {
                let host = loop.host(context)
                loop.run(mode: .default, for: .seconds(60))
                elapsed = threadCPUSeconds() - started
                host.unhost()
            } else {
                g_main_loop_run(main)
                elapsed = threadCPUSeconds() - started
            }
            for source in sources { g_source_destroy(source) }
            for fd in descriptors { close(fd) }
            withExtendedLifetime([never, tick]) {}
            return (ticks - 1, elapsed / Double(iterations) * 1e6)
        }
    }
}

/// Raises the soft limit of open descriptors to the hard one (a thousand watches and the
/// suite's other tests may pass a soft limit of 1,024).
func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// The calling thread's CPU time, in seconds.
func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
