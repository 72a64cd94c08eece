internal import CRunLoopKitLibev
import Glibc

/// Child processes, the platform's part: opening a pidfd, and waiting for one child of this
/// process (never any other: no `waitpid(-1)`), with errors translated in one place.
///
/// A child source (``EVSource/init(childProcess:label:handler:)``) watches its child's pidfd
/// where the kernel has `pidfd_open` (Linux 5.3), and `SIGCHLD` where it does not; either
/// way it reaps its child with ``reap(_:pidfd:call:)``.
package enum ChildProcess {
    /// What ``reap(_:pidfd:call:)`` found.
    package enum Outcome {
        /// The child has not exited yet.
        case running
        /// The child exited and was reaped (it is no zombie any more).
        case exited(status: Int32)
        /// The child was killed by a signal and was reaped (its number).
        case signalled(Int32)
        /// The child cannot be waited for: reaped by someone else, or never a child.
        case failed(SystemCallError)
    }

    /// Throws unless `pid` is a child of this process that nothing has reaped yet; reaps
    /// nothing (`WNOWAIT`).
    ///
    /// - Parameter call: the caller, as the error names it (`"EVSource(childProcess: 42)"`).
    package static func checkIsChild(_ pid: Int32, call: String) throws(SystemCallError) {
        var code: Int32 = 0
        var status: Int32 = 0
        guard clibev_child_wait(pid, -1, 1, &code, &status) >= 0 else {
            let error = Glibc.errno
            throw SystemCallError(call: error == ECHILD
                                    ? "\(call): waitid: \(pid) is not a child of this process (or was reaped already)"
                                    : "\(call): waitid", errno: error)
        }
    }

    /// A pidfd for the child `pid`, or nil when the kernel has none (`ENOSYS` before Linux
    /// 5.3; `EPERM` where a seccomp filter refuses the call) or cannot wait on one (`waitid`'s
    /// `P_PIDFD` needs Linux 5.4: on 5.3 it fails with `EINVAL`): the caller then watches
    /// `SIGCHLD`.
    ///
    /// - Throws: ``SystemCallError`` naming `pidfd_open` when the process has no descriptor
    ///   left (`EMFILE`, `ENFILE`) or the child is gone (`ESRCH`).
    package static func openDescriptor(_ pid: Int32, call: String) throws(SystemCallError) -> Int32? {
        let fd = clibev_pidfd_open(pid)
        guard fd >= 0 else {
            let error = Glibc.errno
            if error == ENOSYS || error == EPERM { return nil }
            throw SystemCallError(call: "\(call): pidfd_open", errno: error)
        }
        var code: Int32 = 0
        var status: Int32 = 0
        if clibev_child_wait(pid, fd, 1, &code, &status) < 0 && Glibc.errno == EINVAL {
            close(fd)
            return nil
        }
        return fd
    }

    /// Reaps the child `pid` if it has exited: through its pidfd when `pidfd` is not
    /// negative (so a pid reused after someone else reaped the child is never touched),
    /// through its pid otherwise.
    package static func reap(_ pid: Int32, pidfd: Int32, call: String) -> Outcome {
        var code: Int32 = 0
        var status: Int32 = 0
        switch clibev_child_wait(pid, pidfd, 0, &code, &status) {
        case 0:
            return .running
        case 1:
            return code == Int32(CLD_EXITED) ? .exited(status: status) : .signalled(status)
        default:
            let error = Glibc.errno
            return .failed(SystemCallError(
                call: error == ECHILD ? "\(call): waitid: the child was reaped by someone else" : "\(call): waitid",
                errno: error))
        }
    }
}
