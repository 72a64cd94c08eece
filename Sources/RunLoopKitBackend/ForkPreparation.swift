import RunLoopKitPlatform
import Synchronization

/// The process's one-time state that a loop's pass reads (the cycle clock's usability and
/// the counter's rate), made before a `fork()` can copy it half made.
///
/// Swift makes a `static let` at its first use, under a once of the runtime's
/// (`swift_once`). A `fork()` by another thread while one is being made copies the once in
/// progress: the child has no thread to finish it, and its first loop pass waits for it
/// forever. So a backend settles this state when it is made (``settle()``), and has it
/// settled again before every later fork, on the forking thread, which then waits for a
/// making in progress on another thread to end before the fork copies it. The runtime's
/// other one-time work (a generic type's metadata, a key path's) cannot be covered so:
/// ARCHITECTURE.md, "Faults, limits and messages", fork().
enum ForkPreparation {
    /// Makes the state, and has it made before every later fork. Called by each libev
    /// backend's initializer.
    static func settle() {
        ProcessForks.beforeEachFork { CycleClock.settle() }
        CycleClock.settle()
    }

    #if DEBUG
    /// Called inside the making of the cycle clock's usability, once per process: a test
    /// holds the making open to fork in it. Debug builds only.
    static let firstUseHookForTests = Mutex<(@Sendable () -> Void)?>(nil)
    #endif
}
