import Synchronization

/// A one-slot channel from a loop's callouts to one consuming task, where the latest value
/// wins: a value sent while the previous one is still unread replaces it (``merge`` folds the
/// two, so that a tick can count what it replaced). Ending it (by cancellation, by the
/// iterator going away, or by its producer) makes the consumer's `next` return nil.
final class LatestValueChannel<Value: Sendable>: Sendable {
    private struct State {
        var pending: Value?
        var waiting: CheckedContinuation<Value?, Never>?
        var finished = false
    }

    private let state = Mutex(State())
    private let merge: @Sendable (_ older: Value, _ newer: Value) -> Value

    /// - Parameter merge: folds an unread value into the one replacing it.
    init(merge: @escaping @Sendable (_ older: Value, _ newer: Value) -> Value) { self.merge = merge }

    /// Hands `value` to the waiting consumer, or keeps it (merged with an unread one).
    func send(_ value: Value) {
        let waiting: CheckedContinuation<Value?, Never>? = state.withLock { state in
            guard !state.finished else { return nil }
            if let waiting = state.waiting {
                state.waiting = nil
                return waiting
            }
            state.pending = state.pending.map { merge($0, value) } ?? value
            return nil
        }
        waiting?.resume(returning: value)
    }

    /// The next value; nil once the channel has finished.
    func next() async -> Value? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let ready: Value?? = state.withLock { state in
                    if let pending = state.pending {
                        state.pending = nil
                        return .some(pending)
                    }
                    if state.finished { return .some(nil) }
                    state.waiting = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    /// Ends the channel: a waiting consumer gets nil, and so does every later `next`.
    func finish() {
        let waiting = state.withLock { state in
            state.finished = true
            state.pending = nil
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(returning: nil)
    }
}
