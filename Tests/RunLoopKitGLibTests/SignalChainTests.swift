import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import Testing

/// `SIGCHLD` shared with GLib (issue 35, item 11): without `pidfd_open`, GLib learns of its
/// children's exits from a `SIGCHLD` handler of its own; a RunLoopKit source that catches
/// `SIGCHLD` (a child source there, or a signal source) must leave GLib's child watches
/// working. In a child process: the signal dispositions and the seccomp filter are the
/// process's.
@Suite("Real time: SIGCHLD shared with GLib", .timeLimit(.minutes(2)))
struct SignalChainTests {
    /// One instruction of a classic BPF program (`struct sock_filter`).
    struct SockFilter {
        var code: UInt16
        var jt: UInt8
        var jf: UInt8
        var k: UInt32
    }

    /// `struct sock_fprog`.
    struct SockFprog {
        var len: UInt16
        var filter: UnsafeMutablePointer<SockFilter>
    }

    /// Makes `pidfd_open` fail with `ENOSYS` in this process, as on a kernel before 5.3: a
    /// seccomp filter (`prctl` is variadic, so it is called through its address with its
    /// five integer arguments). GLib and RunLoopKit then both learn of exits from `SIGCHLD`.
    static func refusePidfdOpen() -> Bool {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let symbol = dlsym(nil, "prctl") else { return false }
        let prctl = unsafeBitCast(symbol, to: Prctl.self)
        let pidfdOpen: UInt32 = 434  // the same number on every architecture
        var program = [
            SockFilter(code: 0x20, jt: 0, jf: 0, k: 0),  // load the system call's number
            SockFilter(code: 0x15, jt: 0, jf: 1, k: pidfdOpen),  // pidfd_open?
            SockFilter(code: 0x06, jt: 0, jf: 0, k: 0x0005_0000 | UInt32(ENOSYS)),  // fail with ENOSYS
            SockFilter(code: 0x06, jt: 0, jf: 0, k: 0x7fff_0000),  // allow the rest
        ]
        return program.withUnsafeMutableBufferPointer { instructions in
            var filter = SockFprog(len: UInt16(instructions.count), filter: instructions.baseAddress!)
            guard prctl(38, 1, 0, 0, 0) == 0 else { return false }  // PR_SET_NO_NEW_PRIVS
            return withUnsafeMutablePointer(to: &filter) { pointer in
                prctl(22, 2, UInt(bitPattern: pointer), 0, 0) == 0  // PR_SET_SECCOMP, SECCOMP_MODE_FILTER
            }
        }
    }

    /// In an exit test: refuses `pidfd_open` (``refusePidfdOpen()``) and checks that it now
    /// fails; when it could not be refused, says "FAIL" on standard error and returns false.
    static func withoutPidfdOpen() -> Bool {
        guard refusePidfdOpen(), pidfdOpenFails() else {
            FileHandle.standardError.write(Data("FAIL: pidfd_open could not be refused\n".utf8))
            return false
        }
        return true
    }

    /// Whether `pidfd_open` of this process fails with `ENOSYS` (`syscall` is variadic too).
    static func pidfdOpenFails() -> Bool {
        typealias Syscall = @convention(c) (Int, Int, Int) -> Int
        guard let symbol = dlsym(nil, "syscall") else { return false }
        let result = unsafeBitCast(symbol, to: Syscall.self)(434, Int(getpid()), 0)
        return result == -1 && errno == ENOSYS
    }

    @Test("without pidfd_open, a GLib child watch still fires beside a RunLoopKit child source")
    func glibChildWatchBesideChildSource() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            guard SignalChainTests.withoutPidfdOpen() else { exit(0) }
            let context = g_main_context_new()
            // GLib's child, which exits once the RunLoopKit source catches SIGCHLD.
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { exit(4) }
            let glibChild = fork()
            if glibChild == 0 {
                var byte: UInt8 = 0
                _ = read(fds[0], &byte, 1)
                _exit(7)
            }
            var exitedStatus: Int32 = -1
            let watch = g_child_watch_source_new(glibChild)
            g_source_set_callback(watch, unsafeBitCast({ (_: GPid, status: gint, data: gpointer?) in
                data!.assumingMemoryBound(to: Int32.self).pointee = status
            } as GChildWatchFunc, to: GSourceFunc.self), &exitedStatus, nil)
            g_source_attach(watch, context)
            // A RunLoopKit child source on the SIGCHLD path, for a child of its own.
            let loop = loopOfThisThread()
            let ownChild = fork()
            if ownChild == 0 { _exit(3) }
            let ownExit = Shared<EVSource.ChildExit?>(nil)
            let own = try! EVSource(childProcess: ownChild) { source in ownExit.value = source.childExit }
            loop.add(own, forMode: .default)
            _ = write(fds[1], "x", 1)  // GLib's child exits now
            let start = monotonicSeconds()
            while (exitedStatus == -1 || ownExit.value == nil) && monotonicSeconds() - start < 5 {
                loop.run(mode: .default, for: .milliseconds(10), returnAfterSourceHandled: true)
                while g_main_context_iteration(context, 0) != 0 {}
            }
            let glibSaw = exitedStatus != -1
            FileHandle.standardError.write(Data(
                "\(glibSaw && ownExit.value != nil ? "PASS" : "FAIL"): GLib's child watch \(glibSaw ? "fired" : "never fired") in 5 s; RunLoopKit's child source \(ownExit.value.map { "saw \($0)" } ?? "saw nothing")\n".utf8))
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }
}
