import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import Testing

/// `SIGCHLD` shared with GLib in the order ``SignalChainTests`` does not cover (issue 35,
/// item 11): without `pidfd_open`, GLib installs its own `SIGCHLD` handler when its first
/// child watch is made and sets `SIG_DFL` when its last one goes, over whatever handler the
/// signal had, RunLoopKit's included. Both GLib's child watches and RunLoopKit's sources
/// must go on seeing children exit, in either order. In a child process: the signal
/// dispositions and the seccomp filter are the process's.
@Suite("Real time: SIGCHLD taken by GLib after RunLoopKit", .timeLimit(.minutes(2)))
struct SignalChainOrderTests {
    /// Expects the child process to have written a line starting with "PASS" to its
    /// standard error (it exits with success either way, after writing what it saw).
    static func expectPass(_ result: ExitTest.Result?) {
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }

    /// A GLib child watch of `pid` on `context`, and where it stores the child's wait status
    /// (-1 until then). The caller keeps the returned source reference.
    static func childWatch(_ pid: pid_t, on context: OpaquePointer?)
        -> (watch: UnsafeMutablePointer<GSource>, status: UnsafeMutablePointer<Int32>) {
        let status = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        status.initialize(to: -1)
        let watch = g_child_watch_source_new(pid)!
        g_source_set_callback(watch, unsafeBitCast({ (_: GPid, status: gint, data: gpointer?) in
            data!.assumingMemoryBound(to: Int32.self).pointee = status
        } as GChildWatchFunc, to: GSourceFunc.self), status, nil)
        g_source_attach(watch, context)
        return (watch, status)
    }

    /// A child that exits with `code` once a byte is written to the returned descriptor, or
    /// once this process is gone (it holds no write end: its read then ends; a child left
    /// running would keep the exit test's standard error open).
    static func childExitingOnWrite(_ code: Int32) -> (pid: pid_t, go: Int32) {
        let (readEnd, writeEnd) = makePipe()
        let pid = fork()
        if pid == 0 {
            close(writeEnd)
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            _exit(code)
        }
        close(readEnd)
        return (pid, writeEnd)
    }

    /// The handler `SIGCHLD` has now.
    static func sigchldHandler() -> sigaction {
        var now = sigaction()
        sigaction(SIGCHLD, nil, &now)
        return now
    }

    /// Whether two dispositions name the same handler.
    static func sameHandler(_ a: sigaction, _ b: sigaction) -> Bool {
        unsafeBitCast(a.__sigaction_handler, to: Int.self) == unsafeBitCast(b.__sigaction_handler, to: Int.self)
    }

    /// Runs `loop` and iterates `context` until `condition` holds, for at most 5 s.
    static func drive(_ loop: EVRunLoop, _ context: OpaquePointer?, until condition: () -> Bool) -> Bool {
        let start = monotonicSeconds()
        while !condition() {
            if monotonicSeconds() - start > 5 { return false }
            loop.run(mode: .default, for: .milliseconds(10), returnAfterSourceHandled: true)
            while g_main_context_iteration(context, 0) != 0 {}
        }
        return true
    }

    @Test("without pidfd_open, a GLib child watch made after a RunLoopKit SIGCHLD source: both see the child")
    func glibChildWatchAfterSIGCHLDSource() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            guard SignalChainTests.withoutPidfdOpen() else { exit(0) }
            let loop = loopOfThisThread()
            let sigchlds = Shared<Int>(0)
            let source = EVSource(signal: SIGCHLD) { _ in sigchlds.value += 1 }
            loop.add(source, forMode: .default)
            let context = g_main_context_new()
            let child = Self.childExitingOnWrite(7)
            // GLib's first child watch installs GLib's SIGCHLD handler over RunLoopKit's.
            let exited = Self.childWatch(child.pid, on: context).status
            let glibHandler = Self.sigchldHandler()
            // Passes of the loop (each checks the disposition), until every arrival so far is
            // taken: the count below is the child's exit's only.
            loop.run(mode: .default, for: .milliseconds(200))
            let before = sigchlds.value
            _ = write(child.go, "x", 1)
            let both = Self.drive(loop, context) { exited.pointee != -1 && sigchlds.value > before }
            // The last release gives the signal back to the handler that took it last: GLib's.
            source.invalidate()
            let restored = Self.sameHandler(Self.sigchldHandler(), glibHandler)
            let glibSaw = exited.pointee != -1
            FileHandle.standardError.write(Data((
                "\(both && restored ? "PASS" : "FAIL"): GLib's child watch \(glibSaw ? "saw its child (status \(exited.pointee))" : "never fired") in 5 s; "
                    + "RunLoopKit's source saw \(sigchlds.value - before) SIGCHLD after the child's exit; "
                    + "after the last invalidate SIGCHLD has \(restored ? "GLib's handler again" : "another handler than GLib's")\n").utf8))
            exit(0)
        }
        Self.expectPass(result)
    }

    @Test("without pidfd_open, a RunLoopKit child source sees a child that exited while GLib's handler held SIGCHLD")
    func childExitWhileGLibHeldTheSignal() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            guard SignalChainTests.withoutPidfdOpen() else { exit(0) }
            let loop = loopOfThisThread()
            let own = Self.childExitingOnWrite(3)
            let ownExit = Shared<EVSource.ChildExit?>(nil)
            let source = try! EVSource(childProcess: own.pid) { source in ownExit.value = source.childExit }
            loop.add(source, forMode: .default)
            // A pass: the source's first check of its child (still running) is done.
            loop.run(mode: .default, for: .milliseconds(50))
            let context = g_main_context_new()
            let glibChild = Self.childExitingOnWrite(7)
            _ = Self.childWatch(glibChild.pid, on: context)
            // RunLoopKit's child exits while GLib's handler, not RunLoopKit's, has SIGCHLD:
            // the signal goes to GLib alone (waitid with WNOWAIT leaves the child waitable).
            _ = write(own.go, "x", 1)
            var info = siginfo_t()
            _ = waitid(P_PID, id_t(own.pid), &info, WEXITED | WNOWAIT)
            let seen = Self.drive(loop, context) { ownExit.value != nil }
            FileHandle.standardError.write(Data(
                "\(seen ? "PASS" : "FAIL"): RunLoopKit's child source \(ownExit.value.map { "saw \($0)" } ?? "saw nothing in 5 s")\n".utf8))
            _ = write(glibChild.go, "x", 1)
            withExtendedLifetime(source) { exit(0) }
        }
        Self.expectPass(result)
    }

    @Test("without pidfd_open, GLib's last child watch going (SIG_DFL) leaves a RunLoopKit SIGCHLD source working")
    func glibLastChildWatchGoes() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            guard SignalChainTests.withoutPidfdOpen() else { exit(0) }
            let context = g_main_context_new()
            let glibChild = Self.childExitingOnWrite(7)
            let (watch, exited) = Self.childWatch(glibChild.pid, on: context)
            // RunLoopKit's source comes second and chains GLib's handler.
            let loop = loopOfThisThread()
            let sigchlds = Shared<Int>(0)
            let source = EVSource(signal: SIGCHLD) { _ in sigchlds.value += 1 }
            loop.add(source, forMode: .default)
            _ = write(glibChild.go, "x", 1)
            let glibSaw = Self.drive(loop, context) { exited.pointee != -1 }
            // GLib's last child watch goes: GLib sets SIGCHLD to SIG_DFL, over RunLoopKit's.
            g_source_destroy(watch)
            g_source_unref(watch)
            loop.run(mode: .default, for: .milliseconds(200))
            let before = sigchlds.value
            let own = Self.childExitingOnWrite(3)
            _ = write(own.go, "x", 1)
            let seen = Self.drive(loop, context) { sigchlds.value > before }
            source.invalidate()
            let restored = unsafeBitCast(Self.sigchldHandler().__sigaction_handler, to: Int.self) == 0  // SIG_DFL
            FileHandle.standardError.write(Data((
                "\(glibSaw && seen && restored ? "PASS" : "FAIL"): GLib's child watch \(glibSaw ? "fired" : "never fired"); "
                    + "after it went, RunLoopKit's source \(seen ? "saw" : "never saw") a child's exit; "
                    + "after the last invalidate SIGCHLD is \(restored ? "SIG_DFL again" : "not SIG_DFL")\n").utf8))
            exit(0)
        }
        Self.expectPass(result)
    }
}
