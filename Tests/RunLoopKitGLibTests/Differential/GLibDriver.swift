import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib

/// What iterates a scenario's context: GLib's own loop (the oracle), or RunLoopKit hosting
/// the context or attached to it, alone or beside RunLoopKit work that changes how the loop
/// passes.
enum GLibDriver: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `g_main_loop_run`: the oracle.
    case glib
    /// `loop.host(context)`, `loop.run(mode: .default, …)`.
    case hosted
    /// Hosted, beside a RunLoopKit idle source in the hosted mode: the loop never waits.
    case hostedBesideIdle
    /// Hosted, the loop driven by zero-timeout runs only (a polling run each pass).
    case hostedPolling
    /// Hosted, a RunLoopKit timer running a private mode (not hosted) for 5 ms every 20 ms.
    case hostedWithPrivateRuns
    /// Hosted, a RunLoopKit timer iterating GLib itself every 20 ms
    /// (`g_main_context_iteration` from a RunLoopKit callout).
    case hostedIteratedFromCallouts
    /// `loop.attach(to: context)` under `g_main_loop_run`, beside a RunLoopKit timer.
    case attached
    /// Attached, the RunLoopKit timer iterating GLib itself every 20 ms.
    case attachedIteratedFromCallouts

    var description: String { rawValue }

    /// Whether GLib's poll count is bounded by the oracle's: the drivers whose loop never
    /// waits by design iterate GLib once a pass.
    var pollsLikeGLib: Bool { self != .hostedBesideIdle && self != .hostedPolling }

    /// The polls a run may add to the oracle's by design: a wake for a RunLoopKit timer is a
    /// GLib iteration (the private runs every 20 ms, the attached loop's 15 ms ticker), and
    /// the iterating drivers' timer iterates GLib every 20 ms (a poll that finds nothing, or
    /// two); two polls each.
    func extraPolls(inMilliseconds duration: UInt32) -> Int {
        let every15ms = 2 * Int(duration) / 15, every20ms = 2 * Int(duration) / 20
        switch self {
        case .glib, .hosted, .hostedBesideIdle, .hostedPolling: return 0
        case .hostedWithPrivateRuns: return every20ms
        case .hostedIteratedFromCallouts: return 2 * every20ms
        case .attached: return every15ms
        case .attachedIteratedFromCallouts: return every15ms + 2 * every20ms
        }
    }

    /// Runs `scenario` on a fresh thread with a fresh context.
    func run(_ scenario: GLibScenario) async -> GLibOutcome {
        await onFreshThreadAwaiting { runHere(scenario) }
    }

    private func runHere(_ scenario: GLibScenario) -> GLibOutcome {
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        g_main_context_set_poll_func(context, ThreadPolls.poll)
        let run = ScenarioRun(context: context)
        let loop = loopOfThisThread()
        let limit = monotonicSeconds() + 20
        switch self {
        case .glib:
            let main = g_main_loop_new(context, 0)!
            defer { g_main_loop_unref(main) }
            run.endRun = { g_main_loop_quit(main) }
            start(scenario, run)
            ThreadPolls.count = 0
            g_main_context_push_thread_default(context)
            g_main_loop_run(main)
            g_main_context_pop_thread_default(context)
        case .attached, .attachedIteratedFromCallouts:
            let main = g_main_loop_new(context, 0)!
            defer { g_main_loop_unref(main) }
            run.endRun = { g_main_loop_quit(main) }
            let attachment = loop.attach(to: context)
            let ticker = EVTimer(interval: 0.015, repeats: true) { _ in }
            loop.add(ticker, forMode: .default)
            let iterating = self == .attachedIteratedFromCallouts ? Self.iteratingTimer(context) : nil
            if let iterating { loop.add(iterating, forMode: .default) }
            start(scenario, run)
            ThreadPolls.count = 0
            g_main_context_push_thread_default(context)
            g_main_loop_run(main)
            g_main_context_pop_thread_default(context)
            ticker.invalidate()
            iterating?.invalidate()
            attachment.detach()
        case .hosted, .hostedBesideIdle, .hostedPolling, .hostedWithPrivateRuns, .hostedIteratedFromCallouts:
            let host = loop.host(context)
            run.endRun = { loop.stop() }
            var extras: [EVTimer] = []
            var idle: EVSource?
            if self == .hostedBesideIdle {
                let source = EVSource.idle { _ in }
                loop.add(source, forMode: .default)
                idle = source
            }
            if self == .hostedWithPrivateRuns {
                let keepAlive = EVTimer(interval: 3600, repeats: false) { _ in }
                loop.add(keepAlive, forMode: "private")
                let modal = EVTimer(interval: 0.02, repeats: true) { _ in
                    EVRunLoop.current.run(mode: "private", for: .milliseconds(5))
                }
                loop.add(modal, forMode: .default)
                extras += [keepAlive, modal]
            }
            if self == .hostedIteratedFromCallouts {
                let iterating = Self.iteratingTimer(context)
                loop.add(iterating, forMode: .default)
                extras.append(iterating)
            }
            start(scenario, run)
            ThreadPolls.count = 0
            g_main_context_push_thread_default(context)
            while !run.isFinished && monotonicSeconds() < limit {
                if self == .hostedPolling {
                    loop.run(mode: .default, for: .zero)
                } else {
                    loop.run(mode: .default, for: .seconds(20))
                }
            }
            g_main_context_pop_thread_default(context)
            for timer in extras { timer.invalidate() }
            idle?.invalidate()
            host.unhost()
        }
        let polls = ThreadPolls.count
        run.end()
        return GLibOutcome(entries: run.entries.map { GLibOutcome.Entry(name: $0.name, at: $0.at) }, polls: polls)
    }

    /// A RunLoopKit timer whose callout iterates GLib until nothing is ready.
    private static func iteratingTimer(_ context: OpaquePointer) -> EVTimer {
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context)))
        return EVTimer(interval: 0.02, repeats: true) { _ in
            while g_main_context_iteration(OpaquePointer(bitPattern: address), 0) != 0 {}
        }
    }

    private func start(_ scenario: GLibScenario, _ run: ScenarioRun) {
        scenario.setUp(run)
        Self.end(run, after: scenario.endAfter, atLatest: Double(scenario.endAfter) / 1000 + Self.endGrace)
    }

    /// How long a run stays quiet (nothing dispatched) before its end may come: longer than any
    /// gap a scenario schedules between two of its dispatches.
    static let quietBeforeEnd = 0.15
    /// How far past its planned end a run may go on while it is not quiet.
    static let endGrace = 5.0

    /// Ends `run` with the low-priority timeout after `milliseconds`, or later if something was
    /// dispatched within ``quietBeforeEnd`` of it (then it waits until that much quiet, at most
    /// until `latest` seconds). A fixed end cut a run short when the machine stalled the
    /// process past the end's due time: the dispatch the stall delayed was then due after the
    /// end, in GLib's own loop as in RunLoopKit's drivers.
    private static func end(_ run: ScenarioRun, after milliseconds: UInt32, atLatest latest: Double) {
        run.timeout(milliseconds, priority: G_PRIORITY_LOW) {
            let now = monotonicSeconds() - run.start
            let quiet = now - (run.entries.last?.at ?? 0)
            if quiet >= GLibDriver.quietBeforeEnd || now >= latest {
                run.log("end")
                run.finish()
            } else {
                GLibDriver.end(run, after: UInt32(((GLibDriver.quietBeforeEnd - quiet) * 1000).rounded(.up)), atLatest: latest)
            }
            return false
        }
    }
}

/// What a run dispatched, and how often GLib polled.
struct GLibOutcome: Sendable, CustomStringConvertible {
    struct Entry: Sendable {
        let name: String
        let at: Double
    }
    let entries: [Entry]
    let polls: Int

    var names: [String] { entries.map(\.name) }
    /// How long the run took, to its end's dispatch.
    var milliseconds: UInt32 { UInt32(((entries.last?.at ?? 0) * 1000).rounded(.up)) }

    var description: String {
        entries.map { "\($0.name) @\(Int(($0.at * 1000).rounded())) ms" }.joined(separator: ", ") + "; \(polls) polls"
    }
}
