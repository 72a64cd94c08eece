import Synchronization

/// One sleeping task's continuation, resumed exactly once: by its timer (or clock) or by
/// cancellation, whichever comes first (cancellation may even come before the task suspends).
final class SleepingTask: Sendable {
    private enum State {
        case notStarted
        case sleeping(CheckedContinuation<Void, any Error>)
        case finished((any Error)?)
    }

    private let state = Mutex(State.notStarted)

    /// Records the continuation; returns false (after resuming it) when the sleep already ended.
    func start(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        let ended: (any Error)?? = state.withLock { state in
            if case .finished(let error) = state { return .some(error) }
            state = .sleeping(continuation)
            return .none
        }
        guard let ended else { return true }
        if let error = ended { continuation.resume(throwing: error) } else { continuation.resume() }
        return false
    }

    /// Whether the sleep has ended (by its timer or by cancellation).
    var isFinished: Bool {
        state.withLock { if case .finished = $0 { true } else { false } }
    }

    /// Ends the sleep, normally (`error` nil) or by throwing `error`; later calls do nothing.
    func finish(throwing error: (any Error)?) {
        let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
            switch state {
            case .notStarted:
                state = .finished(error)
                return nil
            case .sleeping(let continuation):
                state = .finished(error)
                return continuation
            case .finished:
                return nil
            }
        }
        guard let continuation else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}
