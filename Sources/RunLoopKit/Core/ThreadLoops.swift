import Glibc

/// The loops of one thread: the thread's own loop, created on first use, and the stack of
/// loops running on it (so that `EVRunLoop.current` inside a callout is the loop that
/// called it, virtual loops included).
///
/// The corresponding CF mechanism is `__CFRunLoops` plus the thread-specific slot that
/// `CFRunLoopGetCurrent` reads.
final class ThreadLoops {
    var own: EVRunLoop?
    /// Unretained: a loop is alive while it runs (its caller holds it).
    var running: [Unmanaged<EVRunLoop>] = []

    /// This thread's record, created on first use and released when the thread exits.
    static var current: ThreadLoops {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<ThreadLoops>.fromOpaque(raw).takeUnretainedValue()
        }
        let record = ThreadLoops()
        pthread_setspecific(key, Unmanaged.passRetained(record).toOpaque())
        return record
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            if let raw { Unmanaged<ThreadLoops>.fromOpaque(raw).release() }
        }
        precondition(status == 0, "RunLoopKit: pthread_key_create failed (\(status))")
        return key
    }()
}
