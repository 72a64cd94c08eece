import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import Synchronization

/// A GLib callback as a Swift closure: GLib's C callbacks receive it as their user data
/// (unretained: the caller keeps the `GLibCall` alive while GLib may call it).
final class GLibCall {
    let body: () -> Bool
    init(_ body: @escaping () -> Bool) { self.body = body }

    var userData: gpointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ data: gpointer?) -> GLibCall { Unmanaged<GLibCall>.fromOpaque(data!).takeUnretainedValue() }

    /// A `GSourceFunc`: calls the closure; true keeps the source (`G_SOURCE_CONTINUE`).
    static let sourceFunc: GSourceFunc = { data in GLibCall.from(data).body() ? 1 : 0 }

    /// A `GUnixFDSourceFunc`.
    static let fdFunc: GUnixFDSourceFunc = { _, _, data in GLibCall.from(data).body() ? 1 : 0 }
}

/// What a test saw, in order; touched on one thread (the loop's).
final class Log {
    var entries: [String] = []
    func add(_ entry: String) { entries.append(entry) }
}

/// The calling thread's loop (`EVRunLoop.current` is unavailable in async code; tests are
/// synchronous functions, so this runs on the test's thread).
func loopOfThisThread() -> EVRunLoop { EVRunLoop.current }

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// A pipe whose ends the caller closes; close-on-exec, so that a process another test spawns
/// meanwhile holds no copy of either end.
func makePipe() -> (read: Int32, write: Int32) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fatalError("pipe: \(errno)") }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}

/// Attaches a timeout of `milliseconds` to `context` (GLib's `g_timeout_add`, for a context
/// other than the default one).
@discardableResult
func attachTimeout(_ milliseconds: UInt32, to context: OpaquePointer?, _ call: GLibCall) -> UnsafeMutablePointer<GSource> {
    let source = g_timeout_source_new(milliseconds)!
    g_source_set_callback(source, GLibCall.sourceFunc, call.userData, nil)
    g_source_attach(source, context)
    g_source_unref(source)
    return source
}

/// Attaches an idle to `context` (GLib's `g_idle_add`, for a context other than the default one).
func attachIdle(to context: OpaquePointer?, _ call: GLibCall) {
    let source = g_idle_source_new()!
    g_source_set_callback(source, GLibCall.sourceFunc, call.userData, nil)
    g_source_attach(source, context)
    g_source_unref(source)
}

/// A value other threads may read and write.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// Runs `body` on a new thread, waits for it and returns its result: a thread whose loop
/// nothing else has used, and which may own a GLib context for the body's length.
func onFreshThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    let result = Shared<T?>(nil)
    let thread = Thread {
        result.value = body()
        done.signal()
    }
    thread.start()
    done.wait()
    return result.value!
}

/// Runs `body` on a new thread and returns its result without blocking a thread of the
/// caller's (the test runner's few threads stay free while the body runs).
func onFreshThreadAwaiting<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// The ids of sources a test added to GLib's default context: those still attached when the
/// test ends (a failing test) are destroyed, so that no later test dispatches a callback
/// whose user data is gone.
final class DefaultContextSources {
    private var ids: [guint] = []

    /// Records the id `g_timeout_add`, `g_idle_add` or `g_unix_fd_add` returned.
    func add(_ id: guint) { ids.append(id) }

    /// Destroys the recorded sources that are still attached.
    func removeLeftovers() {
        for id in ids {
            if let source = g_main_context_find_source_by_id(nil, id) { g_source_destroy(source) }
        }
        ids = []
    }
}

/// Attaches a descriptor watch of `condition` on `fd` to `context` (GLib's `g_unix_fd_add`,
/// for a context other than the default one); `call` is the `GUnixFDSourceFunc`.
@discardableResult
func attachUnixFD(_ fd: Int32, _ condition: GIOCondition, to context: OpaquePointer?, _ call: GLibCall)
    -> UnsafeMutablePointer<GSource> {
    let source = g_unix_fd_source_new(fd, condition)!
    g_source_set_callback(source, unsafeBitCast(GLibCall.fdFunc, to: GSourceFunc.self), call.userData, nil)
    g_source_attach(source, context)
    g_source_unref(source)
    return source
}
