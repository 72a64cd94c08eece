import RunLoopKit

/// The "all done" animation: a star crossing a bar, one frame per display-link callout.
///
/// Each frame is computed for the moment it will be seen — the link's `targetTimestamp` —
/// so a late callout draws the right position instead of stuttering behind.
public final class Celebration {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    /// How long the animation plays.
    public static let length: Duration = .milliseconds(1500)

    /// How far the animation is, from 0 to 1, as of the last frame.
    public private(set) var progress = 0.0
    /// Frames drawn so far.
    public private(set) var framesDrawn = 0
    private let start: EVRunLoop.Instant
    private var link: EVFrameTimer?
    private let onFrame: (Celebration) -> Void
    private let onFinish: (Celebration) -> Void

    /// Starts the animation on `loop`'s common modes at 60 frames per second.
    ///
    /// - Parameters:
    ///   - onFrame: called after every frame with the new ``progress``.
    ///   - onFinish: called once when the animation reached its end (not after ``stop()``).
    public init(loop: EVRunLoop, onFrame: @escaping (Celebration) -> Void,
                onFinish: @escaping (Celebration) -> Void) {
        start = loop.now
        self.onFrame = onFrame
        self.onFinish = onFinish
        let link = EVFrameTimer(framesPerSecond: 60, label: "celebration",
            block: EVRunLoop.isolated { [weak self] link in
            self?.frame(link)
        })
        self.link = link
        loop.add(link, forMode: .common)
    }

    private func frame(_ link: EVFrameTimer) {
        let elapsed = link.targetTimestamp - start
        progress = min(1, max(0, elapsed / Self.length))
        framesDrawn += 1
        onFrame(self)
        if progress >= 1 {
            stop()
            onFinish(self)
        }
    }

    /// Frames the link dropped because a callout came too late.
    public private(set) var framesDropped = 0

    /// Whether the animation still runs.
    public var isRunning: Bool { link != nil }

    /// Pauses or resumes the frames (the app in the background draws nothing).
    public var isPaused: Bool {
        get { link?.isPaused ?? false }
        set { link?.isPaused = newValue }
    }

    /// Ends the animation now.
    public func stop() {
        guard let link else { return }
        framesDropped = link.droppedFrames
        link.invalidate()
        self.link = nil
    }

    /// The bar for `width` columns: a star at the current position.
    public func bar(width: Int) -> String {
        let position = Int((progress * Double(width - 1)).rounded())
        return String(repeating: "-", count: position) + "*" + String(repeating: "-", count: width - 1 - position)
    }
}
