// Public: the `@inlinable` bodies below call the shim, and compile into the caller.
public import CRunLoopKitLibev

/// Forks, the platform's part: how many times this process is a forked child, as the C
/// shim's `pthread_atfork` child handler counts them (the count the loop's backend adopts a
/// child by), and what runs before each fork. Core compares the count a kernel object was
/// made at (a loop's inotify instance) with this one to tell that it is now a child's copy
/// of its parent's.
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the module above (ARCHITECTURE.md, "Layers").
@usableFromInline package enum ProcessForks {
    /// The process's fork count now: 0 in a process that is no forked child.
    @inlinable
    package static var generation: UInt32 { clibev_fork_generation() }

    /// Has `hook` called on the forking thread before every later `fork()` of the process (the
    /// shim's `pthread_atfork` prepare handler, before it takes the signal registry's lock),
    /// in place of the hook set before. libev's counterpart is the program's own
    /// `pthread_atfork` (ev(3), "ev_loop_fork").
    package static func beforeEachFork(_ hook: @convention(c) () -> Void) {
        clibev_before_each_fork(hook)
    }
}
