import CRunLoopKitGLib
import Foundation
import RunLoopKit
import RunLoopKitGLib

/// Issue 37, item 1: the main thread's CPU per GLib iteration (a 1 ms `g_timeout_add` beside
/// idle `g_unix_fd_add` watches), hosted or attached against GLib's own loop, judged by the
/// median of ratios per repetition; and callgrind's instructions for the same runs (user space
/// only: GLib's `poll` and the host's `epoll_wait` count as one call each).
enum GLibIterationCost: Workload {
    static let name = "glibcost"
    static let summary = "CPU per GLib iteration (a 1 ms g_timeout_add) beside 0, 200 and 1,000 idle g_unix_fd_add watches: GLib hosted in EVRunLoop.main.run() and RunLoopKit attached to g_main_loop_run, against GLib's own g_main_loop_run, interleaved child processes; and callgrind's user-space instructions per iteration of the same runs."

    /// Who runs the iterations: the first three ``GLibBothWays/Variant``s (`--probe
    /// glib-iteration` takes their index).
    typealias Variant = GLibBothWays.Variant
    static let variants: [Variant] = [.glib, .hosted, .attached]

    static let watchCounts = [0, 200, 1_000]
    /// The timeout pacing the callgrind runs (ms): under valgrind an iteration beside 1,000
    /// watches takes over 1 ms, and a loop always behind never waits.
    static let instructionPacing = 50
    /// Iterations before the counted ones.
    static let warmUp = 20

    static func measure(_ plan: Plan) -> [Row] {
        guard plan.peers.contains(.runLoopKit) else { return [] }
        return watchCounts.flatMap { cpuRows(plan, watches: $0) } + watchCounts.flatMap { instructionRows(plan, watches: $0) }
    }

    private static func row(_ metric: String, unit: String, _ values: [Double]) -> Row {
        Row.make(name, metric, unit: unit, values: [.runLoopKit: values], unavailable: GLibBothWays.unavailable)
    }

    private static func cpuRows(_ plan: Plan, watches: Int) -> [Row] {
        let figures = Children.interleaved(name, repetitions: plan.repetitions, variants) {
            [$0.rawValue, String(watches), String(plan.glibCostIterations)]
        }.mapValues { $0.map { $0[0] } }
        let n = "CPU per GLib iteration (a 1 ms g_timeout_add), \(watches.grouped) idle descriptor watches, \(plan.glibCostIterations.grouped) iterations"
        let reference = figures[.glib]!
        // The goal: at most GLib's own cost, 1.1× with no watches.
        let bound = watches == 0 ? 1.1 : 1.0
        var rows = [row("\(n), \(Variant.glib.runLabel)", unit: "µs", reference)]
        for variant in [Variant.hosted, .attached] {
            let values = figures[variant]!
            let ratios = Summary(zip(values, reference).map { $0 / $1 })
            rows.append(row("\(n), \(variant.runLabel)", unit: "µs", values).withGoal(
                "≤ \(NumberFormat.value(bound))× GLib's own (\(NumberFormat.value(Summary(reference).median)) µs); "
                    + "ratio per repetition median \(NumberFormat.value(ratios.median))× (\(NumberFormat.value(ratios.min))–\(NumberFormat.value(ratios.max))×)",
                met: ratios.median <= bound))
        }
        return rows
    }

    private static func instructionRows(_ plan: Plan, watches: Int) -> [Row] {
        var unavailable = ""
        guard let callgrind = Callgrind(unavailable: &unavailable) else {
            FileHandle.standardError.write(Data("loop-bench: \(name) instructions \(unavailable)\n".utf8))
            return []
        }
        // The difference of a run of 2I and one of I iterations, over I: the setup (the first
        // query registering every descriptor, metadata made once) cancels out.
        let iterations = plan.glibCostInstructionIterations
        var counts: [Variant: Double] = [:]
        for (index, variant) in variants.enumerated() {
            let total = [iterations, 2 * iterations].map { counted in
                callgrind.count(in: "measuredGLibRun", probe: "glib-iteration",
                                [String(watches), String(counted), String(index), String(instructionPacing)], peer: .runLoopKit)
                    .perOperation * Double(counted + warmUp)
            }
            counts[variant] = (total[1] - total[0]) / Double(iterations)
        }
        let n = "user-space instructions per GLib iteration (callgrind, a \(instructionPacing) ms g_timeout_add; runs of \((2 * iterations).grouped) less \(iterations.grouped) iterations), \(watches.grouped) idle descriptor watches"
        var rows = [row("\(n), \(Variant.glib.runLabel)", unit: "instructions", [counts[.glib]!])]
        for variant in [Variant.hosted, .attached] {
            let ratio = counts[variant]! / counts[.glib]!
            rows.append(row("\(n), \(variant.runLabel)", unit: "instructions", [counts[variant]!]).withGoal(
                "none (user space only; the CPU row holds the goal): \(NumberFormat.value(ratio))× GLib's own (\(NumberFormat.value(counts[.glib]!)))",
                met: nil))
        }
        return rows
    }

    /// A child: `[variant, watches, iterations]`; prints the main thread's CPU µs per iteration.
    static func child(_ arguments: [String]) {
        guard arguments.count == 3, let variant = Variant(rawValue: arguments[0]), variants.contains(variant),
              let watches = Int(arguments[1]), let iterations = Int(arguments[2])
        else { fatalError("loop-bench \(name) child: expected a variant, watches and iterations, got \(arguments)") }
        let (cpu, _) = run(variant, watches: watches, iterations: iterations)
        print(String(format: "%.3f", cpu))
    }

    /// `iterations` GLib iterations after ``warmUp`` beside `watches` idle watches, paced by a
    /// `g_timeout_add(milliseconds)`: CPU µs per counted iteration, and all iterations made.
    static func run(_ variant: Variant, watches: Int, iterations: Int, milliseconds: UInt32 = 1) -> (cpuMicroseconds: Double, iterations: Int) {
        DescriptorSources.raiseDescriptorLimit(to: watches + 1_000)
        let watched = (0..<watches).map { _ in
            let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
            precondition(fd >= 0, "loop-bench \(name): eventfd failed (errno \(errno))")
            return (fd, g_unix_fd_add(fd, G_IO_IN, { _, _, _ in 1 }, nil))
        }
        var (ticks, started, elapsed) = (0, 0.0, 0.0)
        GLibBothWays.withMainLoop(variant) { quit in
            let tick = GLibBothWays.Callback {
                ticks += 1
                if ticks == warmUp { started = threadCPUSeconds() }
                guard ticks < warmUp + iterations else {
                    elapsed = threadCPUSeconds() - started
                    quit()
                    return false
                }
                return true
            }
            g_timeout_add(milliseconds, GLibBothWays.Callback.sourceFunc, tick.retainedUserData)
        }
        for (fd, id) in watched {
            g_source_remove(id)
            close(fd)
        }
        return (elapsed / Double(iterations) * 1e6, ticks)
    }

    private static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// Runs GLib's `mainLoop` (`g_main_loop_run`), or `EVRunLoop.main` when nil, until stopped:
/// every GLib child's run, counted in the iteration cost's (`--toggle-collect='*measuredGLibRun*'`).
@inline(never)
func measuredGLibRun(_ mainLoop: OpaquePointer?) {
    if let mainLoop {
        g_main_loop_run(mainLoop)
    } else {
        _ = EVRunLoop.main.run(mode: .default, for: .seconds(3_600))
    }
}
