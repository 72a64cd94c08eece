// Public: the `@inlinable` accessors below call the C library, and compile into the caller.
public import Glibc

/// A thread-specific slot (`pthread_key_t`), the platform's part: one pointer per thread,
/// and a destructor the C library calls with it when a thread that set it exits (the slot
/// reads nil from then on).
///
/// The corresponding CF mechanism is `_CFSetTSD`/`_CFGetTSD` (on pthread keys), which
/// `CFRunLoopGetCurrent` reads.
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the module above (ARCHITECTURE.md, "Layers").
@usableFromInline package struct ThreadKey: @unchecked Sendable {
    // Safe: a pthread key is a number the C library hands out once; the library's own
    // calls synchronise its slots, each of which only its thread reads and writes.
    @usableFromInline let key: pthread_key_t

    /// Creates a key whose `destructor` runs on an exiting thread with its non-nil value.
    /// Stops the program (`misuse`) when the C library has no key left.
    package init(destructor: @convention(c) (UnsafeMutableRawPointer?) -> Void) {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, destructor)
        require(status == 0, "RunLoopKit: pthread_key_create failed (\(status))")
        self.key = key
    }

    /// The calling thread's value, nil when it set none.
    @inlinable
    package var value: UnsafeMutableRawPointer? { pthread_getspecific(key) }

    /// Sets the calling thread's value.
    @inlinable
    package func set(_ value: UnsafeMutableRawPointer?) { pthread_setspecific(key, value) }
}
