// Public: the `@inlinable` bodies below call the shim, and compile into the caller.
public import CRunLoopKitLibev
import Glibc
import Synchronization

/// Thread identity, the platform's part: the number that names a thread for RunLoopKit, the
/// main thread's, and the thread-local cache of the calling thread's number.
///
/// A thread is never identified by its `pthread_t`: the C library hands a `pthread_t` to a
/// new thread as soon as the old one is joined, and in an async `main` the main thread exits
/// inside `dispatchMain()`, after which a later thread may get its value. A number from
/// ``assign()`` is never given to another thread of the process.
///
/// Core keeps the per-thread record (`ThreadLoops`); this seam is the only place it reaches
/// the C shim for threads.
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the module above (ARCHITECTURE.md, "Layers").
@usableFromInline package enum ThreadIdentity {
    /// The main thread's number, known before the main thread first asks for it (so that
    /// ``EVRunLoop/main`` can be created on any thread).
    package static let main: UInt64 = 1
    private static let last = Atomic<UInt64>(main)

    /// The number for the calling thread, made once per thread record: ``main`` on the
    /// process's main thread (the one whose kernel thread id is the process id, asked of the
    /// kernel, never a `pthread_t` compared), otherwise a number no other thread of the
    /// process ever had.
    package static func assign() -> UInt64 {
        clibev_is_main_thread() != 0 ? main : last.add(1, ordering: .relaxed).newValue
    }

    /// The calling thread's number as last ``cache(_:)``d on it; 0 when none is: a call of a
    /// C function that loads a thread-local variable (where `pthread_getspecific` is a
    /// longer call). Out of line on purpose: an inlined thread-local read may be reused after
    /// an async function resumes on another thread; a call is made where it is written.
    @inlinable
    package static var cached: UInt64 { clibev_thread_id() }

    /// Caches `id` as the calling thread's number (0 forgets it).
    package static func cache(_ id: UInt64) { clibev_set_thread_id(id) }
}
