import Synchronization
import RunLoopKitPlatform

/// A display link: a callout once per frame, on a grid of frames at a fixed rate, that
/// knows this frame's time, the next frame's time, and how many frames were dropped.
///
/// Frames sit at `k * duration` on the loop's monotonic clock. When a callout runs late or
/// the loop is busy, the frames that passed meanwhile are dropped (counted in
/// ``droppedFrames``), never delivered in a burst: the next callout is for the next frame
/// still ahead.
///
/// ```swift
/// let link = EVFrameTimer(framesPerSecond: 60) { link in
///     print("draw the frame shown at", link.targetTimestamp)
/// }
/// EVRunLoop.current.add(link, forMode: .common)
/// ```
///
/// The corresponding Apple API is `CADisplayLink` (`timestamp`, `targetTimestamp`,
/// `duration`, `isPaused`); CFRunLoop itself has none.
public final class EVFrameTimer: @unchecked Sendable {
    // Safe to share: the constants never change; the frame counters are written only by
    // the inner timer's callout on the loop's thread and read by the block it calls (or
    // after the run); `paused` is atomic; pausing and resuming run on the loop's thread;
    // `membership` and `target` are behind mutexes.
    //
    // Ownership: the loop keeps an added link alive through its timer (timer -> callout ->
    // target -> link). The target holds the link only from an add until ``invalidate()``
    // or until the loop lets go of the timer (it is released, or its thread exited), so a
    // link never added is freed; the link refers to its loop weakly, so a link cannot keep
    // a loop alive.

    /// Frames per second.
    public let framesPerSecond: Double
    /// A name for traces (``EVRunLoop/Trace``).
    public let label: String?
    private let block: @Sendable (EVFrameTimer) -> Void
    private let periodNanos: Int64
    private let paused = Atomic<Bool>(false)
    /// The timer that drives the frames; it calls back through `target`.
    private let timer: EVTimer
    /// The link as its timer sees it: set from the first add until ``invalidate()``, so that
    /// a loop keeps an added link alive (as a run loop retains a CADisplayLink).
    private let target: FrameTarget
    private var frameNanos: Int64 = 0
    private var lastFrameNanos: Int64?
    private var dropped = 0
    private var delivered = 0
    /// The loop (weakly) and modes the link was added to, to re-add it on resume. Taken by an
    /// add and a pause or resume on any thread: a forked child whose copy a thread of the
    /// parent held at the fork refuses to take it (``ForkCheckedLock``).
    private let membership = ForkCheckedLock(Membership(), name: "a display link's loop and modes (EVFrameTimer)")

    private struct Membership {
        weak var loop: EVRunLoop?
        var modes: [EVRunLoop.Mode] = []
    }

    /// Creates a display link that calls `block` once per frame.
    ///
    /// - Parameters:
    ///   - framesPerSecond: the frame rate, greater than zero and finite (default 60).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - block: the callout, given the link.
    ///
    /// The corresponding Apple initializer is `CADisplayLink(target:selector:)`.
    public init(
        framesPerSecond: Double = 60, label: String? = nil,
        block: @escaping @Sendable (EVFrameTimer) -> Void
    ) {
        require(framesPerSecond.isFinite && framesPerSecond >= 1e-9 && framesPerSecond <= 1e9,
                "EVFrameTimer(framesPerSecond:): framesPerSecond \(framesPerSecond) must be between 1e-9 and 1e9")
        self.framesPerSecond = framesPerSecond
        self.label = label
        self.block = block
        let period = Int64((1e9 / framesPerSecond).rounded())
        periodNanos = period
        let target = FrameTarget()
        self.target = target
        timer = EVTimer(start: .monotonicGrid, intervalNanos: period, repeats: true, toleranceNanos: 0,
                        alignmentOffsetNanos: nil, label: label ?? "frame", loopReleased: { target.link = nil }) { timer in
            target.link?.serveFrame(scheduled: timer.fireNanos)
        }
    }

    /// Called by the inner timer with its scheduled fire instant.
    private func serveFrame(scheduled: Int64) {
        if let last = lastFrameNanos, scheduled > last {
            dropped += Int((scheduled - last) / periodNanos) - 1
        }
        lastFrameNanos = scheduled
        frameNanos = scheduled
        delivered += 1
        block(self)
    }

    /// The scheduled time of the frame being served (CADisplayLink's `timestamp`).
    public var timestamp: EVRunLoop.Instant { EVRunLoop.Instant(nanoseconds: frameNanos) }

    /// The time of the next frame, the one the callout should prepare
    /// (CADisplayLink's `targetTimestamp`).
    public var targetTimestamp: EVRunLoop.Instant { timestamp + duration }

    /// The time between frames (CADisplayLink's `duration`).
    public var duration: Duration { .nanoseconds(periodNanos) }

    /// Frames that passed without a callout because the loop was late or busy.
    public var droppedFrames: Int { dropped }

    /// Frames served so far.
    public var deliveredFrames: Int { delivered }

    /// Whether the link is paused. A paused link does not wake the loop; on resume it
    /// continues on the frame grid, and the frames skipped while paused are not counted as
    /// dropped. Safe from any thread.
    ///
    /// The corresponding Apple property is `CADisplayLink.isPaused`.
    public var isPaused: Bool {
        get { paused.load(ordering: .acquiring) }
        set {
            guard paused.exchange(newValue, ordering: .acquiringAndReleasing) != newValue else { return }
            let (loop, modes) = membership.withLock { ($0.loop, $0.modes) }
            guard let loop else { return }
            let apply: @Sendable () -> Void = { [self] in
                if newValue {
                    for mode in modes { loop.remove(timer, forMode: mode) }
                } else {
                    timer.fireNanos = loop.engine.nextGridPoint(period: periodNanos)
                    lastFrameNanos = nil
                    for mode in modes { loop.add(timer, forMode: mode) }
                }
            }
            if loop.isOwnerThread { apply() } else { loop.enqueue { _ in apply() } }
        }
    }

    /// Whether the link can still fire.
    public var isValid: Bool { timer.isValid }

    /// Stops the link for good and lets its loop release it. Safe from any thread.
    ///
    /// The corresponding Apple method is `CADisplayLink.invalidate()`.
    public func invalidate() {
        timer.invalidate()
        target.link = nil
    }

    /// Records that the link was added to `mode` of `loop`; returns the timer to add, or nil
    /// while paused.
    func attach(to loop: EVRunLoop, mode: EVRunLoop.Mode) -> EVTimer? {
        membership.withLock {
            require($0.loop == nil || $0.loop === loop,
                    "EVRunLoop.add(_:forMode:): frame timer \(label ?? "") belongs to another loop")
            $0.loop = loop
            if !$0.modes.contains(mode) { $0.modes.append(mode) }
        }
        if isValid { target.link = self }
        return isPaused ? nil : timer
    }
}

/// The strong reference from a frame timer's inner timer back to the link.
private final class FrameTarget: Sendable {
    /// Taken by every frame on the loop's thread, and by an add or an invalidate on any
    /// thread: a forked child whose copy a thread of the parent held at the fork refuses to
    /// take it (``ForkCheckedLock``).
    private let storage = ForkCheckedLock<EVFrameTimer?>(nil, name: "a display link's target (EVFrameTimer)")

    var link: EVFrameTimer? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

extension EVRunLoop {
    /// Adds a display link to `mode` (or every common mode). Safe from any thread.
    ///
    /// - Precondition: the link is valid and not added to another loop.
    ///
    /// - Parameters:
    ///   - frameTimer: the frame timer; it serves this loop only from now on.
    ///   - mode: the mode, or ``Mode/common`` for every common mode.
    ///
    /// The corresponding Apple method is `CADisplayLink.add(to:forMode:)`.
    public func add(_ frameTimer: EVFrameTimer, forMode mode: Mode) {
        require(frameTimer.isValid,
                "EVRunLoop.add(_:forMode:): frame timer \(frameTimer.label ?? "") is invalidated")
        if let timer = frameTimer.attach(to: self, mode: mode) { add(timer, forMode: mode) }
    }
}
