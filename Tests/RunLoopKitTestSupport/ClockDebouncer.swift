import Synchronization

/// Emits the last input `delay` after inputs stop, sleeping on any `Clock<Duration>`: each
/// input cancels the previous sleep and starts another. The task-based debouncer of the
/// TestingOnVirtualTime article (DocSnippetTests) and of the async clock tests.
public final class ClockDebouncer: Sendable {
    private let clock: any Clock<Duration>
    private let delay: Duration
    private let emit: @Sendable (String) -> Void
    private let pending = Mutex<Task<Void, Never>?>(nil)

    /// A debouncer that sleeps on `clock` and hands the last input to `emit`.
    public init(clock: any Clock<Duration>, delay: Duration, emit: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.delay = delay
        self.emit = emit
    }

    /// Takes `value`: it is emitted `delay` from now unless another input comes first.
    public func input(_ value: String) {
        let (clock, delay, emit) = (clock, delay, emit)
        let task = Task {
            do {
                try await clock.sleep(for: delay)
                emit(value)
            } catch {}
        }
        pending.withLock { previous in
            previous?.cancel()
            previous = task
        }
    }
}
