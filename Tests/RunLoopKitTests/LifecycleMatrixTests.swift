import Foundation
import RunLoopKit
import Synchronization
import Testing

/// The lifecycle matrix of issue 35 (its core half): each way to end a loop's work —
/// `stop()`, `shutdown()`, `syncShutdown()`, a timer's `invalidate()` from another thread —
/// from each state the loop's thread can be in: idle (nothing to wait for), asleep (waiting
/// for a timer), in a callout, in a run nested in a callout, of a common mode and of a
/// private mode. (The GLib states and `unhost()` / `detach()` are in RunLoopKitGLibTests'
/// LifecycleMatrixGLibTests; fork from each state is ForkTests'.)
@Suite("Real time: the lifecycle matrix, each way to end a loop's work from each state", .timeLimit(.minutes(10)))
struct LifecycleMatrixTests {
    enum State: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case idle = "idle", asleep = "asleep", inCallout = "in a callout"
        case nestedCommon = "in a nested run of a common mode", nestedPrivate = "in a nested run of a private mode"
        var testDescription: String { rawValue }
    }

    enum Operation: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case stop = "stop()", shutdown = "shutdown()", syncShutdown = "syncShutdown()"
        case invalidate = "a timer's invalidate() from another thread"
        var testDescription: String { rawValue }
    }

    @Test("each operation from each state", arguments: Operation.allCases, State.allCases)
    func matrix(operation: Operation, state: State) async throws {
        let subject = LifecycleSubject()
        let reached = await subject.reach(state, withTimers: operation == .invalidate)
        try #require(reached, "the loop did not reach the state \(state.rawValue) within 10 s")
        let start = subject.log.withLock { $0.count }
        switch operation {
        case .stop:
            subject.loop.stop()
            subject.release.signal()
            // The stop ends the innermost run only: a nested run returns, and the run it is
            // nested in goes on (the probe block runs in it); else the thread's run returns
            // and the thread runs its mode again.
            let nested = state == .nestedCommon || state == .nestedPrivate
            #expect(await subject.waitFor(nested ? "nested stopped" : "entry default"))
            subject.loop.perform(inModes: [.common, "private"], label: "probe") { subject.record("probe") }
            #expect(await subject.waitFor("probe"))
            let expected: [String] = switch state {
            case .idle, .asleep, .inCallout: ["exit default", "entry default", "probe"]
            case .nestedCommon: ["exit default", "nested stopped", "probe"]
            case .nestedPrivate: ["exit private", "nested stopped", "probe"]
            }
            #expect(subject.entries(from: start) == expected)
            #expect(await subject.end())
        case .shutdown, .syncShutdown:
            if state == .inCallout {
                Thread.detachNewThread { subject.releaseOnceStopRequested() }
            }
            if operation == .shutdown {
                let returned = await returnsWithin(.seconds(30)) { await subject.loop.shutdown() }
                #expect(returned, "shutdown() did not return within 30 s")
            } else {
                #expect(await subject.end(), "syncShutdown() did not return within 10 s")
            }
            // Every run on the thread ended, innermost first; none started again.
            let expected: [String] = switch state {
            case .idle, .asleep, .inCallout: ["exit default"]
            case .nestedCommon: ["exit default", "nested stopped", "exit default"]
            case .nestedPrivate: ["exit private", "nested stopped", "exit default"]
            }
            #expect(subject.entries(from: start) == expected)
        case .invalidate:
            let timer = try #require(subject.tick.withLock { $0 })
            timer.invalidate()
            subject.release.signal()
            // "after" is due after the invalidated timer's fire date, in the same modes.
            #expect(await subject.waitFor("after"))
            let entries = subject.entries(from: start)
            #expect(!entries.contains("tick"), "the invalidated timer fired: \(entries)")
            #expect(!timer.isValid)
            #expect(await subject.end())
            // The timer's block holds the subject, which holds the timer: let it go.
            subject.tick.withLock { $0 = nil }
        }
    }
}

/// A loop on a thread of its own (``EVRunLoop/startThread(name:)``), its runs' `entry` and
/// `exit` logged by an observer of the common modes and of "private", brought into a
/// ``LifecycleMatrixTests/State``.
final class LifecycleSubject: Sendable {
    let loop = EVRunLoop.startThread(name: "lifecycle")
    let log = Mutex<[String]>([])
    /// Released by the test: ends the callout of the `inCallout` state.
    let release = DispatchSemaphore(value: 0)
    /// The invalidation's subject: a repeating timer due a second after the state is reached.
    let tick = Mutex<EVTimer?>(nil)
    private let armed = Atomic<Bool>(false)
    private let reached = DispatchSemaphore(value: 0)

    init() {
        let loop = loop
        let done = DispatchSemaphore(value: 0)
        loop.perform(inModes: [.common], label: "observe") { [self] in
            let observer = EVObserver(activities: [.entry, .exit, .beforeWaiting]) { _, activity in
                switch activity {
                case .beforeWaiting:
                    if self.armed.exchange(false, ordering: .relaxed) { self.reached.signal() }
                default:
                    let mode = loop.currentMode.map { $0 == .default ? "default" : $0.rawValue } ?? "?"
                    self.record("\(activity == .entry ? "entry" : "exit") \(mode)")
                }
            }
            loop.add(observer, forMode: .common)
            loop.add(observer, forMode: "private")
            done.signal()
        }
        done.wait()
    }

    func record(_ entry: String) { log.withLock { $0.append(entry) } }

    /// The log from `index` on.
    func entries(from index: Int) -> [String] { log.withLock { Array($0[index...]) } }

    /// Brings the loop's thread into `state`, `withTimers`: with the invalidation's two timers
    /// added (in the common modes and "private"); false if it was not reached within 10 s.
    func reach(_ state: LifecycleMatrixTests.State, withTimers: Bool) async -> Bool {
        let loop = loop
        loop.perform(inModes: [.common], label: "reach") { [self] in
            let tick = EVTimer(interval: 1, repeats: true, label: "tick") { _ in self.record("tick") }
            let after = EVTimer(interval: 1.3, repeats: false, label: "after") { _ in
                self.record("after")
                if state == .nestedCommon || state == .nestedPrivate { loop.stop() }
            }
            for timer in [tick, after] where withTimers {
                loop.add(timer, forMode: .common)
                loop.add(timer, forMode: "private")
            }
            if withTimers { self.tick.withLock { $0 = tick } }
            switch state {
            case .idle:
                self.armed.store(true, ordering: .relaxed)
            case .asleep:
                loop.add(EVTimer(interval: 3_600, repeats: false) { _ in }, forMode: .default)
                self.armed.store(true, ordering: .relaxed)
            case .inCallout:
                self.reached.signal()
                _ = self.release.wait(timeout: .now() + 10)
            case .nestedCommon, .nestedPrivate:
                let mode: EVRunLoop.Mode = state == .nestedCommon ? .default : "private"
                let keepAlive = EVTimer(interval: 3_600, repeats: false) { _ in }
                loop.add(keepAlive, forMode: mode)
                self.armed.store(true, ordering: .relaxed)
                let result = loop.run(mode: mode, until: .distantFuture)
                keepAlive.invalidate()
                self.record("nested \(result)")
            }
        }
        return await signalled(reached, within: .seconds(10))
    }

    /// Waits until `entry` is logged; false after 10 s.
    func waitFor(_ entry: String) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        // Checked once more after the deadline: a sleep may end long after it on a loaded
        // machine.
        while !log.withLock({ $0.contains(entry) }) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    /// Releases the callout once the loop has a stop request (the shutdown reached it), or
    /// after 2 s.
    func releaseOnceStopRequested() {
        let deadline = ContinuousClock.now + .seconds(2)
        while !loop.isStopRequested && ContinuousClock.now < deadline { usleep(1_000) }
        release.signal()
    }

    /// Shuts the loop down; false if that took more than 10 s.
    func end() async -> Bool {
        let ended = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [loop] in
            loop.syncShutdown()
            ended.signal()
        }
        return await signalled(ended, within: .seconds(10))
    }
}
