import Synchronization

/// A one-slot channel from a source's callouts to one consuming task, where the latest value
/// wins (``merge`` folds an unread value into the one replacing it), and which its producer
/// can end after the last value (that value is still read; an error is thrown after it).
/// Cancelling the consumer ends it at once.
final class SourceEventChannel<Value: Sendable>: Sendable {
    private struct State {
        var pending: Value?
        var waiting: CheckedContinuation<Result<Value?, EVRunLoop.Error>, Never>?
        var finished = false
        var failure: EVRunLoop.Error?
    }

    private let state = Mutex(State())
    private let merge: @Sendable (_ older: Value, _ newer: Value) -> Value

    /// - Parameter merge: folds an unread value into the one replacing it.
    init(merge: @escaping @Sendable (_ older: Value, _ newer: Value) -> Value) { self.merge = merge }

    /// Hands `value` to the waiting consumer, or keeps it (merged with an unread one).
    func send(_ value: Value) {
        let waiting = state.withLock { state -> CheckedContinuation<Result<Value?, EVRunLoop.Error>, Never>? in
            guard !state.finished else { return nil }
            if let waiting = state.waiting {
                state.waiting = nil
                return waiting
            }
            state.pending = state.pending.map { merge($0, value) } ?? value
            return nil
        }
        waiting?.resume(returning: .success(value))
    }

    /// The next value; nil once the channel has ended and its last value was read.
    ///
    /// - Throws: the error the producer ended the channel with, after its last value.
    func next() async throws(EVRunLoop.Error) -> Value? {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value?, EVRunLoop.Error>, Never>) in
                let ready: Result<Value?, EVRunLoop.Error>? = state.withLock { state in
                    if let pending = state.pending {
                        state.pending = nil
                        return .success(pending)
                    }
                    if state.finished {
                        defer { state.failure = nil }
                        return state.failure.map { .failure($0) } ?? .success(nil)
                    }
                    state.waiting = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
        return try result.get()
    }

    /// Ends the channel after the value it holds, if any; a consumer then gets `failure`
    /// (thrown) or nil.
    func finish(throwing failure: EVRunLoop.Error? = nil) {
        let waiting = state.withLock { state -> CheckedContinuation<Result<Value?, EVRunLoop.Error>, Never>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = failure
            guard state.waiting != nil else { return nil }
            defer {
                state.waiting = nil
                state.failure = nil
            }
            return state.waiting
        }
        waiting?.resume(returning: failure.map { .failure($0) } ?? .success(nil))
    }

    /// Ends the channel now, dropping what it holds: the consumer gets nil.
    func cancel() {
        let waiting = state.withLock { state in
            state.finished = true
            state.pending = nil
            state.failure = nil
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(returning: .success(nil))
    }
}
