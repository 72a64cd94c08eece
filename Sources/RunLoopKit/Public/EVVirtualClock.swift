#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

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
    }

    private let state: Mutex<State>

    /// The phase of the shared wake grid for loops on this clock whose
    /// ``EVRunLoop/timerCoalescing`` is ``EVRunLoop/TimerCoalescing/sharedGrid``: every grid
    /// step's points lie at `bootPhase + k × step` on this clock. A real machine draws its
    /// phase from its boot id; a virtual clock takes it as given, so tests are deterministic.
    public let bootPhase: Duration

    /// Creates a clock whose monotonic reading starts at `start` and whose wall clock
    /// starts at `wallStart` (default: 2026-01-01 00:00:00 UTC, on a whole second).
    /// `bootPhase` places the shared wake grid of loops on this clock (default: zero).
    public init(
        start: EVRunLoop.Instant = EVRunLoop.Instant(nanoseconds: 1_000_000_000_000),
        wallStart: Date = Date(timeIntervalSince1970: 1_767_225_600),
        bootPhase: Duration = .zero
    ) {
        state = Mutex(State(now: start, wallOffset: wallStart.nanosecondsSince1970 - start.nanoseconds))
        self.bootPhase = bootPhase
    }

    /// The current reading of the monotonic clock.
    public var now: EVRunLoop.Instant { state.withLock { $0.now } }

    /// The current reading of the wall clock.
    public var wallNow: Date { Self.date(nanoseconds: wallNanos) }

    /// The wall clock in nanoseconds since 1970.
    var wallNanos: Int64 { state.withLock { $0.now.nanoseconds + $0.wallOffset } }

    /// Moves both clocks forward by `duration` (negative durations are a programmer error).
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "EVVirtualClock.advance(by:): duration \(duration) is negative")
        state.withLock { $0.now = $0.now + duration }
    }

    /// Moves both clocks forward to `instant`, if it is later than now.
    public func advance(to instant: EVRunLoop.Instant) {
        state.withLock { if instant > $0.now { $0.now = instant } }
    }

    /// Sets the wall clock to `date` without moving the monotonic clock, as `settimeofday`
    /// would; loops on this clock re-align their wall-clock timers at their next wake.
    public func setWallClock(to date: Date) {
        let wallNanos = date.nanosecondsSince1970
        state.withLock {
            $0.wallOffset = wallNanos - $0.now.nanoseconds
            $0.wallWasSet = true
        }
    }

    /// Reports, once, whether the wall clock was set since the last call.
    func takeWallClockChange() -> Bool {
        state.withLock { state in
            defer { state.wallWasSet = false }
            return state.wallWasSet
        }
    }

    /// The date `nanoseconds` after 1970.
    static func date(nanoseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(nanoseconds / 1_000_000_000)
            + Double(nanoseconds % 1_000_000_000) / 1e9)
    }
}

extension Date {
    /// Nanoseconds since 1970, computed from whole seconds and the fraction apart so that
    /// no precision is lost to a `Double` product near 10^18.
    var nanosecondsSince1970: Int64 {
        let seconds = timeIntervalSince1970
        let whole = seconds.rounded(.down)
        return Int64(whole) * 1_000_000_000 + Int64(((seconds - whole) * 1e9).rounded())
    }
}
