import RunLoopKitPlatform

/// A callout that runs at chosen points (``EVRunLoop/Activity``) of every run of the modes
/// it was added to.
///
/// Observers of one activity run in ascending ``order``; observers with equal orders run in
/// the order they were added. A non-repeating observer is invalidated after its first
/// callout. Observers belong to the loop's thread: add, remove and invalidate them there.
///
/// ```swift
/// let observer = EVObserver(activities: [.entry, .afterWaiting]) { _, activity in
///     print("woke:", activity)
/// }
/// EVRunLoop.current.add(observer, forMode: .default)
/// ```
///
/// The corresponding CFRunLoop type is `CFRunLoopObserver`, created with
/// `CFRunLoopObserverCreateWithHandler`.
public final class EVObserver {
    /// The activities this observer is called for.
    public let activities: EVRunLoop.Activity
    /// Whether the observer stays valid after its first callout.
    public let repeats: Bool
    /// The observer's position among the observers of an activity: lower runs first.
    public let order: Int
    /// A name for traces (``EVRunLoop/Trace``); nil shows as `"observer"`.
    public let label: String?

    let callout: (EVObserver, EVRunLoop.Activity) -> Void
    /// Whether a callout of this observer is on the stack (nested runs skip it).
    var isFiring = false  // loop thread only
    /// The loop this observer was added to; an observer serves one loop only.
    weak var loop: EVRunLoop?
    private(set) var _isValid = true

    /// Creates an observer.
    ///
    /// - Parameters:
    ///   - activities: the activities to be called for.
    ///   - repeats: false to be invalidated after the first callout.
    ///   - order: the position among observers of the same activity (lower first).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - callout: called with the observer and the activity.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopObserverCreateWithHandler`.
    public init(
        activities: EVRunLoop.Activity,
        repeats: Bool = true,
        order: Int = 0,
        label: String? = nil,
        callout: @escaping (EVObserver, EVRunLoop.Activity) -> Void
    ) {
        require(!activities.isEmpty, "EVObserver(activities:): activities is empty; the observer would never be called")
        self.activities = activities
        self.repeats = repeats
        self.order = order
        self.label = label
        self.callout = callout
    }

    /// Whether the observer can still be called. The corresponding CFRunLoop function is
    /// `CFRunLoopObserverIsValid`.
    public var isValid: Bool { _isValid }

    /// Stops the observer for good and removes it from every mode of its loop. Calling it
    /// again does nothing. The corresponding CFRunLoop function is `CFRunLoopObserverInvalidate`.
    public func invalidate() {
        guard _isValid else { return }
        _isValid = false
        loop?.engine.removeEverywhere(self)
    }
}
