import Foundation
import Glibc
@testable import RunLoopKit
import Synchronization
import Testing

/// Calls of the program's two `SIGCHLD` handlers below (a handler function cannot capture).
private let firstHandlerCalls = Atomic<Int>(0)
private let laterHandlerCalls = Atomic<Int>(0)

/// The handler the program had before any source.
private func firstHandler(_ signal: Int32) { firstHandlerCalls.add(1, ordering: .sequentiallyConsistent) }

/// The handler the program installs over RunLoopKit's again and again.
private func laterHandler(_ signal: Int32) { laterHandlerCalls.add(1, ordering: .sequentiallyConsistent) }

/// `SIGCHLD` sources added and invalidated on several threads while another thread installs
/// the program's handler over RunLoopKit's and the loops take the signal back, while
/// children exit (issue 35, item 11): two threads each drive a loop of their own, two add to
/// and invalidate from one loop on a third thread, which holds one `SIGCHLD` source until the
/// end: its release is the last, and restores the handler the program installed last. In a
/// child process: dispositions are the whole process's.
@Suite("Real time: SIGCHLD sources churned on several threads while it is taken back", .timeLimit(.minutes(5)))
struct SignalChainChurnTests {
    /// Children each worker starts, one at a time.
    static let childrenPerWorker = 40

    /// Whether SIGCHLD's handler is now `handler` (plain, not `SA_SIGINFO`).
    static func installed(_ handler: @convention(c) (Int32) -> Void) -> Bool {
        var now = sigaction()
        sigaction(SIGCHLD, nil, &now)
        return now.sa_flags & SA_SIGINFO == 0
            && unsafeBitCast(now.__sigaction_handler.sa_handler, to: Optional<UnsafeRawPointer>.self)
            == unsafeBitCast(handler, to: Optional<UnsafeRawPointer>.self)
    }

    /// Installs `handler` for SIGCHLD.
    static func install(_ handler: @convention(c) (Int32) -> Void) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        action.sa_flags = SA_RESTART
        sigaction(SIGCHLD, &action, nil)
    }

    /// A child that exits at once with `status`; returns its pid.
    static func exitingChild(_ status: Int32) -> pid_t {
        let pid = fork()
        if pid == 0 { _exit(status) }
        return pid
    }

    /// A worker with a loop of its own on its thread: for each child, a child source (on the
    /// `SIGCHLD` path) and a `SIGCHLD` signal source added, the loop run until the child
    /// source fires (20 s at most), the signal source invalidated. Returns its problems.
    static func ownLoopWorker(_ worker: Int32) -> [String] {
        let loop = EVRunLoop.current
        var problems: [String] = []
        for index in 0..<childrenPerWorker {
            let status = 10 + worker
            let pid = exitingChild(status)
            let seen = LoopBox<EVSource.ChildExit?>(nil)
            let child = try! EVSource(childProcess: pid, usingPidfd: false) { seen.value = $0.childExit }
            loop.add(child, forMode: .default)
            let signal = EVSource(signal: SIGCHLD) { _ in }
            loop.add(signal, forMode: .default)
            let start = ContinuousClock.now
            while seen.value == nil, ContinuousClock.now - start < .seconds(20) {
                loop.run(mode: .default, for: .milliseconds(10), returnAfterSourceHandled: true)
            }
            signal.invalidate()
            if seen.value != .exited(status) {
                problems.append("worker \(worker), child \(index): \(seen.value.map { "\($0)" } ?? "no exit seen in 20 s")")
                child.invalidate()
                var reaped: Int32 = 0
                waitpid(pid, &reaped, 0)
            }
        }
        return problems
    }

    /// A worker adding to `shared`'s loop from its own thread (through `perform` when
    /// `viaPerform`, else `add` called here) and invalidating from here, where the removal
    /// is queued to the loop. Returns its problems.
    static func sharedLoopWorker(_ worker: Int32, _ shared: LoopThread, viaPerform: Bool) -> [String] {
        var problems: [String] = []
        for index in 0..<childrenPerWorker {
            let status = 10 + worker
            let pid = exitingChild(status)
            let seen = Synchronization.Mutex<EVSource.ChildExit?>(nil)
            let fired = DispatchSemaphore(value: 0)
            let child = try! EVSource(childProcess: pid, usingPidfd: false) { source in
                seen.withLock { $0 = source.childExit }
                fired.signal()
            }
            let signal = EVSource(signal: SIGCHLD) { _ in }
            if viaPerform {
                shared.loop.perform {
                    shared.loop.add(child, forMode: .default)
                    shared.loop.add(signal, forMode: .default)
                }
                shared.loop.wakeUp()
            } else {
                shared.loop.add(child, forMode: .default)
                shared.loop.add(signal, forMode: .default)
            }
            let arrived = fired.wait(timeout: .now() + 20) == .success
            signal.invalidate()
            let exit = seen.withLock { $0 }
            if !arrived || exit != .exited(status) {
                problems.append("worker \(worker), child \(index): \(exit.map { "\($0)" } ?? "no exit seen in 20 s")")
                child.invalidate()
                var reaped: Int32 = 0
                waitpid(pid, &reaped, 0)
            }
        }
        return problems
    }

    @Test("child and SIGCHLD sources added and invalidated on four threads while SIGCHLD is taken back: every exit seen, the program's handler restored")
    func churnWhileTakingBack() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            Self.install(firstHandler)
            let shared = LoopThread()
            // Held through the churn, so that the last release is this one's, at the end.
            let held = shared.onLoop {
                let source = EVSource(signal: SIGCHLD) { _ in }
                shared.loop.add(source, forMode: .default)
                return source
            }
            let stop = Atomic<Bool>(false)
            let installs = Atomic<Int>(0)
            let installerDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                while !stop.load(ordering: .sequentiallyConsistent) {
                    Self.install(laterHandler)
                    installs.add(1, ordering: .relaxed)
                    usleep(200)
                }
                installerDone.signal()
            }
            let problems = Synchronization.Mutex<[String]>([])
            let group = DispatchGroup()
            for worker in Int32(0)..<4 {
                group.enter()
                Thread.detachNewThread {
                    let found = worker < 2
                        ? Self.ownLoopWorker(worker)
                        : Self.sharedLoopWorker(worker, shared, viaPerform: worker == 2)
                    problems.withLock { $0 += found }
                    group.leave()
                }
            }
            guard group.wait(timeout: .now() + 200) == .success else {
                FileHandle.standardError.write(Data("FAIL: the workers did not finish in 200 s\n".utf8))
                exit(0)
            }
            stop.store(true, ordering: .sequentiallyConsistent)
            installerDone.wait()
            var found = problems.withLock { $0 }
            // The shared loop takes the program's last handler back at a pass; the last
            // release then restores it (not the handler from before the first source).
            let start = ContinuousClock.now
            while Self.installed(laterHandler), ContinuousClock.now - start < .seconds(20) {
                shared.loop.wakeUp()
                usleep(1_000)
            }
            if Self.installed(laterHandler) { found.append("the program's last handler was not taken back in 20 s") }
            shared.onLoop { held.invalidate() }
            shared.stop()
            if !Self.installed(laterHandler) {
                found.append("after the last release SIGCHLD's handler is not the one the program installed last")
            }
            // With RunLoopKit's handler gone, an exit reaches the program's handler alone.
            let before = laterHandlerCalls.load(ordering: .sequentiallyConsistent)
            let last = Self.exitingChild(0)
            var reaped: Int32 = 0
            waitpid(last, &reaped, 0)
            let exited = ContinuousClock.now
            while laterHandlerCalls.load(ordering: .sequentiallyConsistent) == before, ContinuousClock.now - exited < .seconds(20) {
                usleep(1_000)
            }
            if laterHandlerCalls.load(ordering: .sequentiallyConsistent) == before {
                found.append("the program's handler did not run for an exit after the last release")
            }
            FileHandle.standardError.write(Data((
                "\(found.isEmpty ? "PASS" : "FAIL: " + found.prefix(5).joined(separator: "; ")): "
                    + "\(4 * Self.childrenPerWorker) children, \(installs.load(ordering: .relaxed)) installs of "
                    + "the program's handler, \(laterHandlerCalls.load(ordering: .sequentiallyConsistent)) calls of it\n").utf8))
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }
}
