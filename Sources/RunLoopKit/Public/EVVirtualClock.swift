#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import RunLoopKitPlatform

/// A manual clock for deterministic tests: a loop built on it never sleeps on a deadline,
/// it jumps the clock straight to it.
///
/// ```swift
/// let clock = EVVirtualClock()
/// let loop = EVRunLoop(clock: clock)
/// loop.add(EVTimer(interval: .seconds(5), repeats: false) { _ in }, forMode: .default)
/// loop.run(mode: .default, for: .seconds(60))   // returns at once; clock.now advanced
/// ```
///
/// Waiting with no deadline at all (no timers, no run deadline) still blocks for real until
/// another thread wakes the loop, as the real loop would. Time can also be moved by hand
/// from a callout, with ``advance(by:)``, to simulate slow work; and the wall clock can be
/// set independently with ``setWallClock(to:)``, to simulate a clock change.
///
/// There is no CFRunLoop counterpart; swift-nio's `EmbeddedEventLoop.advanceTime(by:)` is
/// the closest relative.
public final class EVVirtualClock: Sendable {
    private struct State {
        var now: EVRunLoop.Instant
        /// Wall time minus monotonic time, in nanoseconds.
        var wallOffset: Int64
        var wallWasSet = false
        /// Tasks in `sleep(until:tolerance:)`, by id.
        var sleepers: [UInt64: (deadline: EVRunLoop.Instant, sleeper: SleepingTask)] = [:]
        var nextSleeperID: UInt64 = 0
        /// Tasks in `waitForSleepers(_:)`: how many sleepers each waits for.
        var sleeperWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Mutex<State>

    /// The phase of the shared wake grid for loops on this clock whose
    /// ``EVRunLoop/timerCoalescing`` is ``EVRunLoop/TimerCoalescing/sharedGrid``: every grid
    /// step's points lie at `bootPhase + k × step` on this clock. A real machine draws its
    /// phase from its boot id; a virtual clock takes it as given, so tests are deterministic.
    public let bootPhase: Duration

    /// Creates a clock whose monotonic reading starts at `start` and whose wall clock
    /// starts at `wallStart` (default: 2026-01-01 00:00:00 UTC, on a whole second).
    ///
    /// `bootPhase` places the shared wake grid of loops on this clock (default: zero).
    ///
    /// - Precondition: `start` is in `0...1e18` ns (31 years of uptime, leaving the rest of
    ///   `Int64` for deadlines), and `wallStart` within ±9e9 s of 1970.
    ///
    /// - Parameters:
    ///   - start: the monotonic clock's first reading.
    ///   - wallStart: the wall clock's first reading.
    ///   - bootPhase: the phase of the shared wake grid.
    public init(
        start: EVRunLoop.Instant = EVRunLoop.Instant(nanoseconds: 1_000_000_000_000),
        wallStart: Date = Date(timeIntervalSince1970: 1_767_225_600),
        bootPhase: Duration = .zero
    ) {
        let call = "EVVirtualClock(start:wallStart:bootPhase:)"
        require(start.nanoseconds >= 0 && start.nanoseconds <= 1_000_000_000_000_000_000,
                "\(call): start \(start.nanoseconds) ns must be in 0...1000000000000000000")
        let wallNanos = Self.checkedNanos(wallStart, call: call, name: "wallStart")
        state = Mutex(State(now: start, wallOffset: wallNanos - start.nanoseconds))
        self.bootPhase = bootPhase
    }

    /// `date` in nanoseconds since 1970, or a message naming `call` when it has none.
    private static func checkedNanos(_ date: Date, call: String, name: String) -> Int64 {
        let seconds = date.timeIntervalSince1970
        require(seconds.isFinite && abs(seconds) <= 9e9,
                "\(call): \(name) \(seconds) s since 1970 is not within ±9e9 s, the clock's range")
        return date.nanosecondsSince1970
    }

    /// The current reading of the monotonic clock.
    public var now: EVRunLoop.Instant { state.withLock { $0.now } }

    /// The current reading of the wall clock.
    public var wallNow: Date { Self.date(nanoseconds: wallNanos) }

    /// The wall clock in nanoseconds since 1970.
    var wallNanos: Int64 { state.withLock { $0.now.nanoseconds.saturatingAdd($0.wallOffset) } }

    /// Moves both clocks forward by `duration` (negative durations are a programmer error).
    /// Tasks sleeping on this clock until `now` or earlier resume, in deadline order.
    ///
    /// - Parameter duration: how far to move the clock; not negative.
    public func advance(by duration: Duration) {
        require(duration >= .zero, "EVVirtualClock.advance(by:): duration \(duration) is negative")
        resume(state.withLock { state in
            state.now = state.now + duration
            return Self.takeDueSleepers(&state)
        })
    }

    /// Moves both clocks forward to `instant`, if it is later than now. Tasks sleeping on
    /// this clock until `instant` or earlier resume, in deadline order.
    ///
    /// - Parameter instant: the new reading; an instant at or before now leaves the clock where it is.
    public func advance(to instant: EVRunLoop.Instant) {
        resume(state.withLock { state in
            if instant > state.now { state.now = instant }
            return Self.takeDueSleepers(&state)
        })
    }

    /// Sets the wall clock to `date` without moving the monotonic clock, as `settimeofday`
    /// would; loops on this clock re-align their wall-clock timers at their next wake.
    ///
    /// - Parameter date: the wall clock's new reading.
    public func setWallClock(to date: Date) {
        let wallNanos = Self.checkedNanos(date, call: "EVVirtualClock.setWallClock(to:)", name: "date")
        state.withLock {
            $0.wallOffset = wallNanos - $0.now.nanoseconds
            $0.wallWasSet = true
        }
    }

    // MARK: Sleepers (the `Clock` conformance)

    /// A new sleeper id, for ``addSleeper(_:id:until:)``. The caller records it before the
    /// sleeper is added, so that a cancellation from the moment the sleeper can be seen (by
    /// ``sleeperCount`` or ``waitForSleepers(_:)``) finds the id and removes it at once.
    func newSleeperID() -> UInt64 {
        state.withLock { state in
            defer { state.nextSleeperID += 1 }
            return state.nextSleeperID
        }
    }

    /// Registers a task sleeping until `deadline`; it resumes at once if that is not after now.
    /// ``waitForSleepers(_:)`` calls already waiting are resumed only by ``announceSleepers()``.
    func addSleeper(_ sleeper: SleepingTask, id: UInt64, until deadline: EVRunLoop.Instant) {
        let due = state.withLock { state in
            guard deadline > state.now else { return true }
            state.sleepers[id] = (deadline, sleeper)
            return false
        }
        if due { sleeper.finish(throwing: nil) }
    }

    /// Resumes the ``waitForSleepers(_:)`` calls that as many sleepers as they wait for now
    /// satisfy.
    func announceSleepers() {
        let ready = state.withLock { state in
            let count = state.sleepers.count
            defer { state.sleeperWatchers.removeAll { $0.count <= count } }
            return state.sleeperWatchers.filter { $0.count <= count }.map(\.continuation)
        }
        for watcher in ready { watcher.resume() }
    }

    /// Forgets sleeper `id` (its task was cancelled).
    func removeSleeper(_ id: UInt64) {
        _ = state.withLock { $0.sleepers.removeValue(forKey: id) }
    }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until at least `count` tasks are sleeping on this clock: the handshake that
    /// lets a test advance time only once the code under test has started its sleep.
    ///
    /// - Parameter count: how many sleepers to wait for (default 1).
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.sleepers.count >= count { return true }
                state.sleeperWatchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func takeDueSleepers(_ state: inout State) -> [SleepingTask] {
        let due = state.sleepers.filter { $0.value.deadline <= state.now }
            .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
        for (id, _) in due { state.sleepers[id] = nil }
        return due.map(\.value.sleeper)
    }

    private func resume(_ sleepers: [SleepingTask]) {
        for sleeper in sleepers { sleeper.finish(throwing: nil) }
    }

    /// Reports, once, whether the wall clock was set since the last call.
    func takeWallClockChange() -> Bool {
        state.withLock { state in
            defer { state.wallWasSet = false }
            return state.wallWasSet
        }
    }

    /// The date `nanoseconds` after 1970, rounded exactly as Foundation rounds `Date()` from
    /// the same `clock_gettime` reading (so a `Date()` taken earlier never compares later).
    static func date(nanoseconds: Int64) -> Date {
        let (seconds, fraction) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return Date(timeIntervalSinceReferenceDate: Double(seconds - secondsFrom1970ToReferenceDate)
            + 1e-9 * Double(fraction))
    }

    /// Seconds from 1970 to 2001, Foundation's reference date.
    static let secondsFrom1970ToReferenceDate: Int64 = 978_307_200
}

extension Date {
    /// Nanoseconds since 1970, computed from the reference-date interval `Date` stores, whole
    /// seconds and the fraction apart, so that no precision is lost to a `Double` sum or
    /// product; saturating at `Int64`'s range (about the years 1678 and 2262).
    var nanosecondsSince1970: Int64 {
        let interval = timeIntervalSinceReferenceDate
        let whole = interval.rounded(.down)
        let wholeSince1970 = whole + Double(EVVirtualClock.secondsFrom1970ToReferenceDate)
        guard wholeSince1970 < 9.2e9 else { return .max }
        guard wholeSince1970 > -9.2e9 else { return .min }
        return (Int64(whole) + EVVirtualClock.secondsFrom1970ToReferenceDate) * 1_000_000_000
            + Int64(((interval - whole) * 1e9).rounded())
    }
}
