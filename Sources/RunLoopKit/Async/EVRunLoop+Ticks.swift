#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RunLoopKitPlatform

extension EVRunLoop {
    /// One element of ``ticks(every:tolerance:)``, ``ticks(alignedTo:offset:tolerance:)``
    /// and ``frames(framesPerSecond:)``.
    public struct Tick: Sendable, Hashable {
        /// The instant the tick was scheduled for, on the loop's monotonic clock (the timer's
        /// fire date; the frame's timestamp).
        public var scheduled: Instant
        /// The loop's ``EVRunLoop/wakeDate`` in the pass that produced the tick.
        public var wakeDate: Date?
        /// The loop's ``EVRunLoop/wakeInstant`` in the pass that produced the tick: the
        /// ``wakeDate`` on the loop's monotonic clock (nil for a tick made by
        /// ``init(scheduled:wakeDate:skipped:)``).
        public var wakeInstant: Instant?
        /// Ticks that were due since the previous element and never delivered: skipped by the
        /// loop (busy, or running another mode) or replaced while the consumer was busy.
        public var skipped: Int

        /// Creates a tick.
        ///
        /// - Parameters:
        ///   - scheduled: the fire date of the timer that produced the tick.
        ///   - wakeDate: the loop's ``EVRunLoop/wakeDate`` when the timer fired.
        ///   - skipped: ticks due since the previous element and never delivered.
        public init(scheduled: Instant, wakeDate: Date?, skipped: Int) {
            self.scheduled = scheduled
            self.wakeDate = wakeDate
            self.skipped = skipped
        }

        /// Creates a tick with the wake on both clocks.
        ///
        /// - Parameters:
        ///   - scheduled: the fire date of the timer that produced the tick.
        ///   - wakeInstant: the loop's ``EVRunLoop/wakeInstant`` when the timer fired.
        ///   - wakeDate: the loop's ``EVRunLoop/wakeDate`` when the timer fired.
        ///   - skipped: ticks due since the previous element and never delivered.
        public init(scheduled: Instant, wakeInstant: Instant?, wakeDate: Date?, skipped: Int) {
            self.init(scheduled: scheduled, wakeDate: wakeDate, skipped: skipped)
            self.wakeInstant = wakeInstant
        }
    }

    /// An async sequence of ticks driven by a repeating timer (or display link) on a loop.
    ///
    /// - Each iteration (each `makeAsyncIterator()`) adds its own timer to the loop's common
    ///   modes; the timer is invalidated when the consuming task is cancelled or the iterator
    ///   goes away. The loop must be running for ticks to come.
    /// - After a stall, CF's rule: no drift and no burst. Fire dates the loop missed are
    ///   skipped, and a tick that arrives while the consumer has not read the previous one
    ///   replaces it (the latest wins); either way ``Tick/skipped`` counts them.
    ///
    /// There is no CFRunLoop counterpart; it is `Timer.publish(every:on:in:)` as an
    /// `AsyncSequence`, without the burst after a stall of swift-async-algorithms'
    /// `AsyncTimerSequence`.
    public struct Ticks: AsyncSequence, Sendable {
        public typealias Element = Tick

        let loop: EVRunLoop
        /// Makes and adds the driver (a timer or display link) that sends into the channel,
        /// and returns how to stop it.
        let start: @Sendable (LatestValueChannel<Tick, Never>) -> @Sendable () -> Void

        /// Starts a new timer for this iteration.
        ///
        /// - Returns: an iterator whose timer (or display link) runs until the iterator goes away
        ///   or its task is cancelled.
        public func makeAsyncIterator() -> Iterator {
            let channel = LatestValueChannel<Tick, Never> { older, newer in
                Tick(scheduled: newer.scheduled, wakeInstant: newer.wakeInstant, wakeDate: newer.wakeDate,
                     skipped: older.skipped + 1 + newer.skipped)
            }
            return Iterator(subscription: Subscription(channel: channel, stop: start(channel)))
        }

        /// Reads ticks; dropping it ends its timer.
        public struct Iterator: AsyncIteratorProtocol {
            let subscription: Subscription

            /// The next tick, waiting for it; nil once the consuming task is cancelled.
            ///
            /// - Returns: the next tick, or nil once the consuming task is cancelled.
            public mutating func next() async -> Tick? {
                await subscription.channel.next()
            }
        }

        /// One iteration's channel and timer; the timer ends with it.
        final class Subscription: Sendable {
            let channel: LatestValueChannel<Tick, Never>
            let stop: @Sendable () -> Void

            init(channel: LatestValueChannel<Tick, Never>, stop: @escaping @Sendable () -> Void) {
                self.channel = channel
                self.stop = stop
            }

            deinit {
                channel.cancel()
                stop()
            }
        }
    }

    /// Ticks every `interval` on the loop's monotonic clock, first one `interval` from the
    /// start of each iteration.
    ///
    /// - Parameters:
    ///   - interval: the time between ticks, greater than zero.
    ///   - tolerance: how late each tick may come, so that the loop can coalesce it with other
    ///     timers (default zero).
    /// - Returns: the sequence; each `for await` over it has its own timer.
    ///
    /// The corresponding Foundation API is `Timer.publish(every:tolerance:on:in:)`.
    public func ticks(every interval: Duration, tolerance: Duration = .zero) -> Ticks {
        guard interval > .zero else { fatalError("EVRunLoop.ticks(every:tolerance:): interval \(interval) must be greater than zero") }
        guard tolerance >= .zero else { fatalError("EVRunLoop.ticks(every:tolerance:): tolerance \(tolerance) is negative") }
        return Ticks(loop: self) { [self] channel in
            startTicking(channel, interval: interval.nanoseconds) { fire in
                EVTimer(interval: interval, repeats: true, tolerance: tolerance, label: "ticks", block: fire)
            }
        }
    }

    /// Ticks on the wall clock's grid: at every `k * interval + offset` since 1970 (UTC), for
    /// example on every whole second; re-aligned when the wall clock is set.
    ///
    /// - Parameters:
    ///   - interval: the grid step, greater than zero.
    ///   - offset: the grid's phase, in `[0, interval)` (default zero).
    ///   - tolerance: how late each tick may come (default zero).
    /// - Returns: the sequence; each `for await` over it has its own aligned timer.
    ///
    /// See ``EVTimer/init(alignedTo:offset:tolerance:label:block:)-(Duration,_,_,_,_)``; libev's `ev_periodic`.
    public func ticks(alignedTo interval: Duration, offset: Duration = .zero, tolerance: Duration = .zero) -> Ticks {
        Ticks(loop: self) { [self] channel in
            startTicking(channel, interval: interval.nanoseconds) { fire in
                EVTimer(alignedTo: interval, offset: offset, tolerance: tolerance,
                        label: "ticks", block: fire)
            }
        }
    }

    /// A tick per frame of an ``EVFrameTimer`` at `framesPerSecond`; ``Tick/scheduled`` is
    /// the frame's timestamp and ``Tick/skipped`` counts dropped frames.
    ///
    /// - Parameter framesPerSecond: the frame rate, finite and greater than zero (default 60).
    /// - Returns: the sequence; each `for await` over it has its own display link.
    ///
    /// The corresponding Apple API is `CADisplayLink`.
    public func frames(framesPerSecond: Double = 60) -> Ticks {
        Ticks(loop: self) { [self] channel in
            let droppedBefore = LoopBound(0, loop: self)
            let link = EVFrameTimer(framesPerSecond: framesPerSecond, label: "frames") { link in
                let dropped = link.droppedFrames - droppedBefore.value
                droppedBefore.value = link.droppedFrames
                let loop = EVRunLoop.current
                channel.send(Tick(scheduled: link.timestamp, wakeInstant: loop.wakeInstant, wakeDate: loop.wakeDate,
                                  skipped: dropped))
            }
            add(link, forMode: .common)
            return { link.invalidate() }
        }
    }

    /// How many ticks of `interval` fell strictly between fire instants `previous` and
    /// `scheduled`. Rounded: an aligned timer's instants follow the wall clock, so consecutive
    /// ones may be a few nanoseconds more or less than one interval apart.
    static func ticksMissed(from previous: Int64, to scheduled: Int64, interval: Int64) -> Int {
        max(0, Int((scheduled - previous + interval / 2) / interval) - 1)
    }

    /// Adds the timer that `makeTimer` builds around a callout sending ticks into `channel`.
    private func startTicking(
        _ channel: LatestValueChannel<Tick, Never>, interval: Int64,
        makeTimer: (@escaping @Sendable (EVTimer) -> Void) -> EVTimer
    ) -> @Sendable () -> Void {
        let previous = LoopBound<Int64?>(nil, loop: self)
        let timer = makeTimer { timer in
            let scheduled = timer.fireInstant!.nanoseconds
            let missed = previous.value.map { Self.ticksMissed(from: $0, to: scheduled, interval: interval) } ?? 0
            previous.value = scheduled
            let loop = EVRunLoop.current
            channel.send(Tick(scheduled: Instant(nanoseconds: scheduled), wakeInstant: loop.wakeInstant,
                              wakeDate: loop.wakeDate, skipped: missed))
        }
        add(timer, forMode: .common)
        return { timer.invalidate() }
    }
}

/// A value only its loop's thread may touch, checked on every access (SwiftNIO's
/// `NIOLoopBound`): the state of one timer's callouts, which run one at a time there.
///
/// The check is a thread-local load and a compare per access: a tick's callout makes two,
/// beside the channel's lock and the continuation it resumes. The engine's fire path never
/// touches one.
final class LoopBound<Value>: @unchecked Sendable {
    // Safe: `storage` is read and written only on the thread whose identity is `owner` (the
    // loop's thread), which every access checks; making the box touches no value elsewhere.
    private var storage: Value
    /// The loop's thread (``EVRunLoop/owner``): the loop itself is not kept (a timer's
    /// callout holds the box, and the loop holds the timer).
    private let owner: UInt64

    /// A box for `value`, which only `loop`'s thread may then read or write. Any thread.
    init(_ value: Value, loop: EVRunLoop) {
        storage = value
        owner = loop.owner
    }

    /// The value. Loop thread only: another thread stops the program with a message.
    var value: Value {
        get {
            checkThread()
            return storage
        }
        set {
            checkThread()
            storage = newValue
        }
    }

    @inline(__always)
    private func checkThread() {
        require(ThreadLoops.currentID == owner,
                "RunLoopKit: a LoopBound value was touched off its loop's thread (owner \(owner), caller \(ThreadLoops.currentID))")
    }
}
