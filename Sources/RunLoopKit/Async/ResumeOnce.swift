import Synchronization

/// One waiting task's continuation, resumed exactly once: by what it waits for (a timer, a
/// clock, a child's exit) or by cancellation, whichever comes first (cancellation may even
/// come before the task suspends).
final class ResumeOnce<Value: Sendable>: Sendable {
    private enum State {
        case notStarted
        case waiting(CheckedContinuation<Value, any Error>)
        case finished(Result<Value, any Error>)
    }

    private let state = Mutex(State.notStarted)

    /// Records the continuation; returns false (after resuming it) when the wait already ended.
    func start(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let ended: Result<Value, any Error>? = state.withLock { state in
            if case .finished(let result) = state { return result }
            state = .waiting(continuation)
            return nil
        }
        guard let ended else { return true }
        continuation.resume(with: ended)
        return false
    }

    /// Whether the wait has ended (by what it waited for, or by cancellation).
    var isFinished: Bool {
        state.withLock { if case .finished = $0 { true } else { false } }
    }

    /// Ends the wait with `result`; later calls do nothing.
    func finish(_ result: Result<Value, any Error>) {
        let continuation: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .notStarted:
                state = .finished(result)
                return nil
            case .waiting(let continuation):
                state = .finished(result)
                return continuation
            case .finished:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}

/// One sleeping task: resumed by its timer (or clock) or by cancellation.
typealias SleepingTask = ResumeOnce<Void>

extension ResumeOnce where Value == Void {
    /// Ends the sleep, normally (`error` nil) or by throwing `error`; later calls do nothing.
    func finish(throwing error: (any Error)?) {
        finish(error.map { .failure($0) } ?? .success(()))
    }
}
