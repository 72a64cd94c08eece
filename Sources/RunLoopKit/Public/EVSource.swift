import Glibc
import Synchronization

/// An input source: a manual event, a readable or writable file descriptor, or a POSIX
/// signal, whose handler runs in the sources phase of a run of one of its modes.
///
/// - Manual: ``signal()`` marks it, ``EVRunLoop/wakeUp()`` makes a sleeping loop notice it
///   (CF's version-0 source: `CFRunLoopSourceSignal` then `CFRunLoopWakeUp`). Signalled
///   manual sources fire in ascending ``order`` before the loop waits.
/// - File descriptor: fires after a wait in which the descriptor became ready; readiness is
///   level-triggered, so a handler that does not drain the descriptor is called again.
///   Readiness is only watched while a mode holding the source runs.
/// - Signal: the handler runs on the loop's thread after the signal arrived, never inside
///   the signal handler. The signal is caught from ``EVRunLoop/add(_:forMode:)-(EVSource,_)``
///   until ``invalidate()``, whichever mode runs, and delivered when a mode holding it runs.
///
/// The corresponding CFRunLoop type is `CFRunLoopSource` (version 0 for manual sources;
/// CFFileDescriptor and dispatch signal sources for the others).
public final class EVSource: @unchecked Sendable {
    // Safe to share: `kind`, `order`, `label` and `handler` never change; `signalTime` and
    // `valid` are atomic; `ready`, `loop` and the mode list are used only on the loop's
    // thread (cross-thread calls go through the loop's inbox).

    /// What a source waits for.
    public enum Kind: Sendable, Equatable {
        /// Fires when ``EVSource/signal()`` was called (CF version-0 source).
        case manual
        /// Fires when the descriptor is ready to read (`EV_READ`).
        case readable(fileDescriptor: Int32)
        /// Fires when the descriptor is ready to write (`EV_WRITE`).
        case writable(fileDescriptor: Int32)
        /// Fires after the POSIX signal arrived (`ev_signal`).
        case signal(Int32)
    }

    /// What this source waits for.
    public let kind: Kind
    /// The position among the manual sources of a mode: lower fires first.
    public let order: Int
    /// A name for traces (``EVRunLoop/Trace``); nil shows as `"source"`.
    public let label: String?
    let handler: @Sendable (EVSource) -> Void

    /// When a manual source was signalled (monotonic ns, CF's `_signaledTime`); 0 when not.
    private let signalTime = Atomic<UInt64>(0)
    private let valid = Atomic<Bool>(true)
    /// Set by the backend during a wait; consumed when the source fires.
    var isReady = false
    weak var loop: EVRunLoop?
    var modes: [ModeState] = []

    var isManual: Bool { kind == .manual }

    private init(kind: Kind, order: Int, label: String?, handler: @escaping @Sendable (EVSource) -> Void) {
        self.kind = kind
        self.order = order
        self.label = label
        self.handler = handler
    }

    /// Creates a manual source, fired after ``signal()``.
    ///
    /// - Parameters:
    ///   - order: the position among the manual sources of a mode (lower fires first).
    ///   - label: a name for ``EVRunLoop/Trace``.
    ///   - handler: the callout, given the source.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceCreate` with a version-0 context.
    public convenience init(
        order: Int = 0, label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) {
        self.init(kind: .manual, order: order, label: label, handler: handler)
    }

    /// What a descriptor source waits for.
    public enum Readiness: Sendable {
        /// Data to read, or end of file (`EV_READ`).
        case read
        /// Room to write (`EV_WRITE`).
        case write
    }

    /// Creates a source that fires when `fileDescriptor` is ready to read or write.
    ///
    /// - Throws: ``EVRunLoop/Error`` naming `fcntl` when the descriptor is not open.
    /// - Precondition: `fileDescriptor` is not negative.
    ///
    /// The corresponding CF type is `CFFileDescriptor` (watched with libev's `ev_io`).
    public convenience init(
        fileDescriptor: Int32, for readiness: Readiness = .read, label: String? = nil,
        handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        precondition(fileDescriptor >= 0,
                     "EVSource(fileDescriptor:): file descriptor \(fileDescriptor) is negative")
        guard fcntl(fileDescriptor, F_GETFD) >= 0 else {
            throw EVRunLoop.Error(call: "EVSource(fileDescriptor: \(fileDescriptor)): fcntl(F_GETFD)",
                                  errno: errno)
        }
        let kind: Kind = readiness == .read
            ? .readable(fileDescriptor: fileDescriptor) : .writable(fileDescriptor: fileDescriptor)
        self.init(kind: kind, order: 0, label: label, handler: handler)
    }

    /// Creates a source that fires on the loop's thread after the POSIX signal `number`
    /// arrives. Catching starts when the source is added and ends at ``invalidate()``, when
    /// the signal's previous disposition is restored by libev.
    ///
    /// - Precondition: `number` is in `1...64`.
    ///
    /// The corresponding facility is a dispatch signal source (libev's `ev_signal`).
    public convenience init(
        signal number: Int32, label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) {
        precondition(number >= 1 && number <= 64,
                     "EVSource(signal:): signal number \(number) is not in 1...64")
        self.init(kind: .signal(number), order: 0, label: label, handler: handler)
    }

    /// Marks a manual source as ready to fire and records when (a source signalled again
    /// before it fired keeps its first time). The loop notices at its next pass, so call
    /// ``EVRunLoop/wakeUp()`` if it may be asleep. Safe from any thread.
    ///
    /// Sources signalled by the time a pass reaches its sources fire in that pass, in
    /// ascending ``order``, equal orders by signal time; one signalled meanwhile (by another
    /// source's handler, say) fires in the next pass.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceSignal`.
    public func signal() {
        precondition(isManual, "EVSource.signal(): only manual sources can be signalled, not \(kind)")
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanos = UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
        _ = signalTime.compareExchange(expected: 0, desired: max(nanos, 1), ordering: .acquiringAndReleasing)
    }

    /// Whether a manual source was signalled and has not fired since.
    public var isSignalled: Bool { signalTime.load(ordering: .acquiring) != 0 }

    /// When the source was signalled (monotonic ns), or 0 when it is not signalled.
    var signalledAt: UInt64 { signalTime.load(ordering: .acquiring) }

    /// Consumes the signalled mark.
    func takeSignal() -> Bool {
        signalTime.load(ordering: .relaxed) != 0 && signalTime.exchange(0, ordering: .acquiringAndReleasing) != 0
    }

    /// Whether the source can still fire.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceIsValid`.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Stops the source for good: removes it from every mode and stops watching its
    /// descriptor or signal. Safe from any thread; calling it again does nothing.
    ///
    /// The corresponding CFRunLoop function is `CFRunLoopSourceInvalidate`.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        guard let loop else { return }
        if loop.isOwnerThread {
            loop.removeEverywhere(self)
        } else {
            loop.enqueue { loop.removeEverywhere(self) }
        }
    }
}
