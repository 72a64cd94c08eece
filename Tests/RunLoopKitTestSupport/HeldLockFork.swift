#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// What the tests of a fork while another thread holds a lock share (`ForkHeldLockTests` in
/// RunLoopKitTests, `GLibForkHeldLockTests` in RunLoopKitGLibTests): a gate a test seam holds
/// the lock open at, and a fork whose child is expected to stop with a message.
public enum HeldLockFork {
    /// Holds a thread inside a lock (``hold()``, from a seam) until the test forked.
    public final class Gate: Sendable {
        /// 0: not reached; 1: held; 2: let go.
        private let state = Atomic(0)

        /// A gate no thread holds yet.
        public init() {}

        /// Called by the seam, on the thread that holds the lock: waits until ``letGo()``.
        public func hold() {
            guard state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged else { return }
            let deadline = ContinuousClock.now + .seconds(30)
            while state.load(ordering: .acquiring) != 2, ContinuousClock.now < deadline { usleep(1_000) }
        }

        /// Whether a thread holds the lock in ``hold()``, waiting up to 10 s for one to.
        public func waitUntilHeld() -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while state.load(ordering: .acquiring) != 1, ContinuousClock.now < deadline { usleep(1_000) }
            return state.load(ordering: .acquiring) == 1
        }

        /// Lets the holding thread go on (the test forked).
        public func letGo() { state.store(2, ordering: .releasing) }

        /// Waits until a thread holds the lock (exits 1, saying "never held", when none does
        /// in time), forks as ``HeldLockFork/forkExpectingRefusal(message:child:)`` does, then
        /// lets the holding thread go on. Returns how the child ended.
        public func forkWhileHeld(expectingRefusal message: [String], child: () -> Void) -> String {
            guard waitUntilHeld() else {
                FileHandle.standardError.write(Data("never held\n".utf8))
                exit(1)
            }
            defer { letGo() }
            return HeldLockFork.forkExpectingRefusal(message: message, child: child)
        }
    }

    /// Forks once; the child runs `child` with its standard error in a file, then exits 0.
    /// Returns how the child ended: "refused" when a signal stopped it and its standard error
    /// holds every one of `message`, else a description, with its standard error.
    public static func forkExpectingRefusal(message: [String], child: () -> Void) -> String {
        let path = FileManager.default.temporaryDirectory.path + "/runloopkit-heldlock-\(getpid())"
        let pid = fork()
        if pid == 0 {
            let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            dup2(file, 2)
            // The forking thread may block SIGALRM (an exit test's thread does): its alarm
            // would then never end a child that hangs.
            var alarmSignal = sigset_t()
            sigemptyset(&alarmSignal)
            sigaddset(&alarmSignal, SIGALRM)
            pthread_sigmask(SIG_UNBLOCK, &alarmSignal, nil)
            alarm(10)
            child()
            _exit(0)
        }
        let status = ForkedScenario.waitForChild(pid)
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        unlink(path)
        if status > 128 && status != 128 + SIGALRM && message.allSatisfy(text.contains) { return "refused" }
        return "not refused: exit status \(status) (-1: killed after 20 s; 142: its 10 s alarm), standard error: \(text)"
    }
}
