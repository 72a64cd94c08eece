import Foundation
import RunLoopKit

/// The Q&A answer's `wakeDate`, rebuilt on RunLoopKit's public API: a repeating observer of
/// `entry` and `afterWaiting` with a very early order stores the date at which each pass
/// woke, and every callout of that pass reads the stored value.
///
/// The observer is registered lazily: whenever ``date`` is read while the loop runs a mode
/// that does not have the observer yet, it adds itself there (the answer's check of the
/// current mode). The first read in a new mode therefore gets the date of that read, not of
/// the wake. RunLoopKit offers the same value built in as `EVRunLoop.wakeDate`.
public final class ObservedWakeDate {
    /// The observer's order: before any ordinary observer, as in the answer.
    public static let order = -2_000_000

    /// One lazy registration: the mode and the date it happened at.
    public struct Registration: Sendable, Equatable {
        /// The mode the observer was added to.
        public var mode: EVRunLoop.Mode
        /// When, on the wall clock.
        public var date: Date
    }

    private let loop: EVRunLoop
    private let clock: () -> Date
    private var stored: Date?
    private var observer: EVObserver?
    /// Every mode the observer added itself to, in order.
    public private(set) var registrations: [Registration] = []

    /// Creates the tracker for `loop`; nothing is registered until ``date`` is first read.
    ///
    /// - Parameter clock: the current date (`Date()` in the answer; a virtual clock in tests).
    public init(loop: EVRunLoop, clock: @escaping () -> Date) {
        self.loop = loop
        self.clock = clock
    }

    /// The date the current pass woke at, registering the observer in the current mode if
    // snippet: wake-date-observer
    /// it is missing there. Outside a run, simply the current date. Loop thread only.
    public var date: Date {
        if let mode = loop.currentMode {
            let observer = self.observer ?? makeObserver()
            if !loop.contains(observer, inMode: mode) {
                loop.add(observer, forMode: mode)
                let now = clock()
                registrations.append(Registration(mode: mode, date: now))
                stored = now
            }
        }
        return stored ?? clock()
    }

    private func makeObserver() -> EVObserver {
        let observer = EVObserver(activities: [.entry, .afterWaiting], repeats: true, order: Self.order,
                                  label: "wakeDate") { [weak self] _, _ in
            guard let self else { return }
            stored = clock()
        }
        self.observer = observer
        return observer
    }
    // end

    /// Removes the observer from every mode.
    public func invalidate() { observer?.invalidate() }
}
