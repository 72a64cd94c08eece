import Foundation
import Glibc
@testable import RunLoopKit
import Synchronization
import Testing

/// Calls of the program's own `SIGCHLD` handler below (a handler function cannot capture).
private let programCalls = Atomic<Int>(0)

/// The program's own `SIGCHLD` handler, installed over RunLoopKit's again and again.
private func programHandler(_ signal: Int32) { programCalls.add(1, ordering: .sequentiallyConsistent) }

/// `fork()` while `SIGCHLD` is taken back over and over (issue 35, items 11 and 13): one
/// thread installs the program's own handler over RunLoopKit's in a loop, the loop's thread
/// takes the signal back at each pass, and a third thread forks (every other time just as a
/// take-back completes). Each forked child must make a loop of its own, watch `SIGCHLD` and
/// its own child, see that child's exit and call the program's handler for it: no lock
/// copied held, no handler lost. In a child process: dispositions are the whole process's.
@Suite("Real time: fork() while SIGCHLD is taken back", .timeLimit(.minutes(5)))
struct SignalChainForkTests {
    /// The monotonic clock in seconds (no Foundation in forked children).
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Whether SIGCHLD's handler is now the program's.
    static func programHandlerInstalled() -> Bool {
        var now = sigaction()
        sigaction(SIGCHLD, nil, &now)
        let own: @convention(c) (Int32) -> Void = programHandler
        return now.sa_flags & SA_SIGINFO == 0
            && unsafeBitCast(now.__sigaction_handler.sa_handler, to: Optional<UnsafeRawPointer>.self)
            == unsafeBitCast(own, to: Optional<UnsafeRawPointer>.self)
    }

    /// Installs the program's handler for SIGCHLD.
    static func installProgramHandler() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = programHandler
        action.sa_flags = SA_RESTART
        sigaction(SIGCHLD, &action, nil)
    }

    /// Spins (100 ms at most) until the program's handler is installed and then replaced:
    /// a take-back has just put RunLoopKit's in, and its pass may still hold the signal
    /// lock. Returns whether it saw that.
    static func awaitTakeBack() -> Bool {
        let start = now()
        while !programHandlerInstalled() { if now() - start > 0.1 { return false } }
        while programHandlerInstalled() { if now() - start > 0.1 { return false } }
        return true
    }

    /// What a forked child does: makes a loop, watches `SIGCHLD` (a signal source, and a child
    /// source on the `SIGCHLD` path) for a child of its own, lets that child exit, and waits
    /// at most 20 s for both sources and the program's handler. Returns the exit status:
    /// 0 when all three saw the exit.
    static func forkedChild() -> Int32 {
        var go: [Int32] = [0, 0]
        guard pipe(&go) == 0 else { return 90 }
        let grandchild = fork()
        if grandchild == 0 {
            close(go[1])
            var byte: UInt8 = 0
            _ = read(go[0], &byte, 1)
            _exit(7)
        }
        close(go[0])
        let loop = EVRunLoop.current
        let signalled = LoopBox(false)
        let exit = LoopBox<EVSource.ChildExit?>(nil)
        let signalSource = EVSource(signal: SIGCHLD) { _ in signalled.value = true }
        loop.add(signalSource, forMode: .default)
        guard let childSource = try? EVSource(childProcess: grandchild, usingPidfd: false, handler: { exit.value = $0.childExit }) else {
            return 91
        }
        loop.add(childSource, forMode: .default)
        let callsBefore = programCalls.load(ordering: .sequentiallyConsistent)
        close(go[1])  // the grandchild exits now
        let start = now()
        while !signalled.value || exit.value == nil || programCalls.load(ordering: .sequentiallyConsistent) == callsBefore {
            if now() - start > 20 {
                return !signalled.value ? 2 : exit.value == nil ? 3 : 4
            }
            loop.run(mode: .default, for: .milliseconds(10), returnAfterSourceHandled: true)
        }
        guard exit.value == .exited(7) else { return 5 }
        signalSource.invalidate()
        return 0
    }

    @Test("a child forked while another thread installs its handler and the loop takes SIGCHLD back sees its own child exit")
    func forkDuringTakeBack() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let stop = Atomic<Bool>(false)
            let passes = Atomic<Int>(0)
            // The loop's thread: a SIGCHLD source, and a pass every millisecond; each pass
            // takes SIGCHLD back when the program's handler is installed.
            let loopReady = DispatchSemaphore(value: 0)
            let loopDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let loop = EVRunLoop.current
                let source = EVSource(signal: SIGCHLD) { _ in }
                loop.add(source, forMode: .default)
                loopReady.signal()
                while !stop.load(ordering: .sequentiallyConsistent) {
                    loop.run(mode: .default, for: .milliseconds(1))
                    passes.add(1, ordering: .relaxed)
                }
                source.invalidate()
                loopDone.signal()
            }
            loopReady.wait()
            // Taken back once before the forks start: the program's handler is chained.
            Self.installProgramHandler()
            let start = Self.now()
            while Self.programHandlerInstalled() {
                guard Self.now() - start < 20 else {
                    FileHandle.standardError.write(Data("FAIL: the program's handler was never taken back\n".utf8))
                    exit(0)
                }
                usleep(1_000)
            }
            let installs = Atomic<Int>(0)
            Thread.detachNewThread {
                while !stop.load(ordering: .sequentiallyConsistent) {
                    Self.installProgramHandler()
                    installs.add(1, ordering: .relaxed)
                    usleep(100)
                }
            }
            // No fork before both threads are past their first rounds: a fork while another
            // thread runs a first-time initialization of the Swift runtime's (a static's
            // swift_once, a generic type's metadata) copies it in progress, and a child that
            // needs the same one waits for it forever, whatever RunLoopKit does (seen at the
            // loop's first run: CycleClock.isUsable's once, a key path's metadata).
            let warm = Self.now()
            while passes.load(ordering: .relaxed) < 20 || installs.load(ordering: .relaxed) < 20 {
                guard Self.now() - warm < 20 else {
                    FileHandle.standardError.write(Data("FAIL: the loop's thread and the installer did not start in 20 s\n".utf8))
                    exit(0)
                }
                usleep(1_000)
            }
            var failures: [String] = []
            var forks = 0, inheritedProgramHandler = 0
            var atTakeBack = 0
            while forks < 100, failures.count < 3 {
                forks += 1
                // Every other fork as a take-back completes, when the loop's thread may
                // still hold the signal lock; the others whenever they come.
                if forks % 2 == 0, Self.awaitTakeBack() { atTakeBack += 1 }
                let inherits = Self.programHandlerInstalled()
                let child = fork()
                if child == 0 { _exit(Self.forkedChild()) }
                if inherits { inheritedProgramHandler += 1 }
                var status: Int32 = 0
                var exited = false
                let forked = Self.now()
                while Self.now() - forked < 30 {
                    if waitpid(child, &status, WNOHANG) == child { exited = true; break }
                    usleep(5_000)
                }
                if !exited {
                    kill(child, SIGKILL)
                    waitpid(child, &status, 0)
                    failures.append("child \(forks) stuck for 30 s")
                } else if status != 0 {
                    failures.append("child \(forks) exited with status \(status >> 8) (signal \(status & 0x7f))")
                }
            }
            stop.store(true, ordering: .sequentiallyConsistent)
            _ = loopDone.wait(timeout: .now() + 30)
            FileHandle.standardError.write(Data((
                "\(failures.isEmpty ? "PASS" : "FAIL: " + failures.joined(separator: "; ")): \(forks) forks, "
                    + "\(installs.load(ordering: .relaxed)) installs of the program's handler, "
                    + "\(passes.load(ordering: .relaxed)) passes, \(atTakeBack) forks as a take-back completed, about "
                    + "\(inheritedProgramHandler) while the program's handler was installed\n").utf8))
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }
}
