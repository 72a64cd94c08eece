#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What the fork scenarios share (`ForkMatrixTests` in RunLoopKitTests, `GLibForkTests` in
/// RunLoopKitGLibTests): each runs in an exit test's child process, forks there, reaps its
/// own child and says its findings on standard error, its verdict last.
public enum ForkedScenario {
    /// Writes `text` and a newline to standard error, which the runner reads.
    public static func say(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

    /// Ends the scenario's process with its verdict said last (the runner reads it there).
    public static func finish(_ passed: Bool) -> Never {
        say(passed ? "PASS" : "FAIL")
        exit(0)
    }

    /// Waits up to `seconds` for the child; its exit status (128 + the signal's number when a
    /// signal ended it), or -1 if it had to be killed.
    public static func waitForChild(_ pid: pid_t, within seconds: Int = 20) -> Int32 {
        var status: Int32 = 0
        for _ in 0..<seconds * 100 {
            if waitpid(pid, &status, WNOHANG) == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return -1
    }

    /// Reaps the scenario's child (``waitForChild(_:)``; -2 when `pid` is none, the fork not
    /// having happened) and says its exit status unless it is 0; that status.
    public static func reapChild(_ pid: pid_t) -> Int32 {
        let status = pid > 0 ? waitForChild(pid) : -2
        if status != 0 { say("child: exit status \(status)") }
        return status
    }

    /// What a scenario's process said (its standard error), and whether its verdict was PASS.
    public static func outcome(saying standardError: [UInt8]?) -> (passed: Bool, text: String) {
        let text = standardError.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return (text.hasSuffix("PASS\n"), text)
    }
}
