internal import CRunLoopKitLibev
import Glibc
import Synchronization

/// A POSIX thread that runs one closure and is joined when it ends: a joined thread is gone
/// from the process (its stack freed, its entry in `/proc/self/task` removed) by the time
/// ``join()`` returns. Foundation's `Thread` is detached and cannot be joined. One that
/// nothing waits for (the thread that joins another for an async caller) is detached
/// instead (``detach()``).
package struct JoinableThread: Sendable {
    private let handle: pthread_t
    /// The process that started the thread: a child made by `fork()` has no copy of it,
    /// unless the thread is the one that forked.
    private let process: pid_t
    /// The thread's number among the process's joinable threads, which it tags itself with
    /// (`clibev_set_thread_tag`): a forked child tells by it whether the thread that forked
    /// is this one.
    private let tag: UInt64
    private static let lastTag = Atomic<UInt64>(0)

    /// The closure, handed to the new thread through `pthread_create`'s argument.
    private final class Start {
        let name: String?
        let tag: UInt64
        let body: @Sendable () -> Void
        init(name: String?, tag: UInt64, body: @escaping @Sendable () -> Void) { (self.name, self.tag, self.body) = (name, tag, body) }
    }

    /// Starts a joinable thread named `name` (the kernel keeps its first 15 bytes) running
    /// `body`. Stops the program with a message naming the error if the thread cannot start.
    package init(name: String?, _ body: @escaping @Sendable () -> Void) {
        let tag = Self.lastTag.add(1, ordering: .relaxed).newValue
        let start = Unmanaged.passRetained(Start(name: name, tag: tag, body: body)).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            if let name = start.name { _ = clibev_set_thread_name(JoinableThread.kernelName(name)) }
            clibev_set_thread_tag(start.tag)
            start.body()
            return nil
        }, start)
        if status != 0 {
            Unmanaged<Start>.fromOpaque(start).release()
            misuse("EVRunLoop.startThread(name:): pthread_create failed: \(String(cString: strerror(status))) (errno \(status))")
        }
        self.handle = handle
        process = getpid()
        self.tag = tag
    }

    /// Waits for the thread to end (`pthread_join`). Once per thread, never from the thread
    /// itself. In a child made by `fork()` since the start, waits only when this thread is
    /// the one that forked (the child's copy of it, which goes on), and otherwise returns at
    /// once: the child has no copy of the thread, so there is nothing to wait for, and
    /// `handle` names no thread of this process (POSIX leaves a join of it undefined;
    /// ThreadSanitizer stops the child on it).
    package func join() {
        guard getpid() == process || clibev_forking_thread_tag() == tag else { return }
        let status = pthread_join(handle, nil)
        require(status == 0, "EVRunLoop: pthread_join failed: \(String(cString: strerror(status))) (errno \(status))")
    }

    /// Lets the thread go without a join (`pthread_detach`): it frees itself when it ends.
    /// Once per thread, instead of ``join()``.
    package func detach() {
        let status = pthread_detach(handle)
        require(status == 0, "EVRunLoop: pthread_detach failed: \(String(cString: strerror(status))) (errno \(status))")
    }

    /// `name`'s longest prefix of whole characters that fits the kernel's 15 bytes.
    package static func kernelName(_ name: String) -> String {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= 15 else { break }
            kept.append(character)
        }
        return kept
    }
}
