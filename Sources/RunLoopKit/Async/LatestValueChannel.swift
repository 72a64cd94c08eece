import Synchronization

/// A one-slot channel from a loop's callouts to one consuming task, where the latest value
/// wins: a value sent while the previous one is still unread replaces it (``merge`` folds the
/// two, so that a tick can count what it replaced). Its producer can end it after the last
/// value (that value is still read, then `Failure` is thrown, or nil returned); cancelling
/// the consumer, or ``cancel()``, ends it at once.
///
/// The tick sequences use it with `Failure == Never`; the source event sequences throw the
/// source's error.
final class LatestValueChannel<Value: Sendable, Failure: Error>: Sendable {
    private typealias Delivery = Result<Value?, Failure>

    private struct State {
        var pending: Value?
        var waiting: CheckedContinuation<Delivery, Never>?
        var finished = false
        var failure: Failure?
    }

    private let state = Mutex(State())
    private let merge: @Sendable (_ older: Value, _ newer: Value) -> Value

    /// - Parameter merge: folds an unread value into the one replacing it.
    init(merge: @escaping @Sendable (_ older: Value, _ newer: Value) -> Value) { self.merge = merge }

    /// Hands `value` to the waiting consumer, or keeps it (merged with an unread one).
    func send(_ value: Value) {
        let waiting = state.withLock { state -> CheckedContinuation<Delivery, Never>? in
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
    /// - Throws: the failure the producer ended the channel with, after its last value.
    func next() async throws(Failure) -> Value? {
        let delivery = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Delivery, Never>) in
                let ready: Delivery? = state.withLock { state in
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
        return try delivery.get()
    }

    /// Ends the channel after the value it holds, if any; a consumer then gets `failure`
    /// (thrown) or nil.
    func finish(throwing failure: Failure? = nil) {
        let waiting = state.withLock { state -> CheckedContinuation<Delivery, Never>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = failure
            guard let waiting = state.waiting else { return nil }
            state.waiting = nil
            state.failure = nil
            return waiting
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
