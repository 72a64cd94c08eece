import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

/// What a program's own `SIGCHLD` handler saw, from the handlers below (a handler function
/// cannot capture).
private let chainingCalls = Atomic<Int>(0)
private let plainCalls = Atomic<Int>(0)
private let infoCalls = Atomic<Int>(0)
private let infoPid = Atomic<Int32>(0)
/// The handler the chaining handler displaced, and whether it takes `siginfo_t`: stored
/// before it is installed. (Two atomics rather than a global `sigaction`: AddressSanitizer
/// registers a Swift global of that imported type without its tail padding, 148 of 152
/// bytes, and reports the whole-value copy as an overflow.)
private let chainingPreviousHandler = Atomic<Int>(0)
private let chainingPreviousTakesInfo = Atomic<Bool>(false)

/// Records `displaced` as what the chaining handler calls after its own work.
private func chain(to displaced: sigaction) {
    chainingPreviousTakesInfo.store(displaced.sa_flags & SA_SIGINFO != 0, ordering: .sequentiallyConsistent)
    chainingPreviousHandler.store(unsafeBitCast(displaced.__sigaction_handler, to: Int.self), ordering: .sequentiallyConsistent)
}

/// A well-behaved handler that chains: it calls the one it displaced after its own work
/// (as the JVM's libjsig, Mono and Go's runtime do).
private func chainingHandler(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    chainingCalls.add(1, ordering: .sequentiallyConsistent)
    let handler = chainingPreviousHandler.load(ordering: .sequentiallyConsistent)
    guard handler > 1 else { return }  // SIG_DFL or SIG_IGN
    typealias InfoHandler = @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void
    typealias PlainHandler = @convention(c) (Int32) -> Void
    if chainingPreviousTakesInfo.load(ordering: .sequentiallyConsistent) {
        unsafeBitCast(handler, to: InfoHandler.self)(signal, info, context)
    } else {
        unsafeBitCast(handler, to: PlainHandler.self)(signal)
    }
}

private func plainHandler(_ signal: Int32) { plainCalls.add(1, ordering: .sequentiallyConsistent) }

private func infoHandler(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    infoCalls.add(1, ordering: .sequentiallyConsistent)
    if let info { infoPid.store(info.pointee._sifields._sigchld.si_pid, ordering: .sequentiallyConsistent) }
}

/// A program's own `SIGCHLD` handlers installed over RunLoopKit's after a source watches
/// the signal (issue 35, item 11): the per-pass check takes the signal back and chains them.
/// In child processes: dispositions are the whole process's.
@Suite("Real time: a program's SIGCHLD handlers over RunLoopKit's", .timeLimit(.minutes(2)))
struct SignalChainHandlerTests {
    /// This thread's loop, from synchronous code (the child of a fork runs on the exit
    /// test's thread).
    static func loopOfThisThread() -> EVRunLoop { EVRunLoop.current }

    /// Installs `action` for SIGCHLD and returns the disposition it displaced.
    @discardableResult
    static func install(_ action: sigaction) -> sigaction {
        var action = action, previous = sigaction()
        sigaction(SIGCHLD, &action, &previous)
        return previous
    }

    static func siginfoAction(_ handler: @escaping @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void) -> sigaction {
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = handler
        action.sa_flags = SA_SIGINFO | SA_RESTART
        return action
    }

    static func plainAction(_ handler: @escaping @convention(c) (Int32) -> Void) -> sigaction {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        action.sa_flags = SA_RESTART
        return action
    }

    static func handlerAddress(_ action: sigaction) -> Int { unsafeBitCast(action.__sigaction_handler, to: Int.self) }

    /// A child that exits at once; returns its pid.
    static func exitingChild() -> pid_t {
        let pid = fork()
        if pid == 0 { _exit(0) }
        return pid
    }

    /// Runs `loop` until `condition` holds, for at most 5 s.
    static func drive(_ loop: EVRunLoop, until condition: () -> Bool) -> Bool {
        let start = Date()
        while !condition() {
            if Date().timeIntervalSince(start) > 5 { return false }
            loop.run(mode: .default, for: .milliseconds(10), returnAfterSourceHandled: true)
        }
        return true
    }

    @Test("a chaining handler (calls the one it displaced) installed over RunLoopKit's: no endless recursion")
    func chainingHandlerOverFanOut() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = Self.loopOfThisThread()
            let sigchlds = Atomic<Int>(0)
            let source = EVSource(signal: SIGCHLD) { _ in sigchlds.add(1, ordering: .sequentiallyConsistent) }
            loop.add(source, forMode: .default)
            var previous = sigaction()
            sigaction(SIGCHLD, nil, &previous)
            chain(to: previous)  // RunLoopKit's fan-out
            Self.install(Self.siginfoAction(chainingHandler))
            // A pass takes the signal back and chains the chaining handler.
            loop.run(mode: .default, for: .milliseconds(50))
            let before = sigchlds.load(ordering: .sequentiallyConsistent)
            let child = Self.exitingChild()
            let seen = Self.drive(loop) { sigchlds.load(ordering: .sequentiallyConsistent) > before }
            var status: Int32 = 0
            waitpid(child, &status, 0)
            let calls = chainingCalls.load(ordering: .sequentiallyConsistent)
            FileHandle.standardError.write(Data((
                "\(seen && calls >= 1 && calls < 100 ? "PASS" : "FAIL"): the source \(seen ? "saw" : "never saw") the exit; "
                    + "the chaining handler ran \(calls) times\n").utf8))
            withExtendedLifetime(source) { exit(0) }
        }
        let text = standardError(result)
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }

    @Test("SA_SIGINFO and plain handlers installed in turn over RunLoopKit's: each called with the child's siginfo; the last release restores the last")
    func twoHandlersInTurn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = Self.loopOfThisThread()
            let sigchlds = Atomic<Int>(0)
            let source = EVSource(signal: SIGCHLD) { _ in sigchlds.add(1, ordering: .sequentiallyConsistent) }
            loop.add(source, forMode: .default)
            var problems: [String] = []
            // A: SA_SIGINFO, over RunLoopKit's; taken back at the next pass.
            Self.install(Self.siginfoAction(infoHandler))
            loop.run(mode: .default, for: .milliseconds(50))
            var before = sigchlds.load(ordering: .sequentiallyConsistent)
            let first = Self.exitingChild()
            if !Self.drive(loop, until: { sigchlds.load(ordering: .sequentiallyConsistent) > before && infoCalls.load(ordering: .sequentiallyConsistent) > 0 }) {
                problems.append("A: source \(sigchlds.load(ordering: .sequentiallyConsistent) - before), A calls \(infoCalls.load(ordering: .sequentiallyConsistent))")
            }
            var status: Int32 = 0
            waitpid(first, &status, 0)
            if infoPid.load(ordering: .sequentiallyConsistent) != first {
                problems.append("A's siginfo named pid \(infoPid.load(ordering: .sequentiallyConsistent)), not \(first)")
            }
            // B: plain, over RunLoopKit's again; A must never be called again.
            let plain = Self.plainAction(plainHandler)
            Self.install(plain)
            loop.run(mode: .default, for: .milliseconds(50))
            let aCalls = infoCalls.load(ordering: .sequentiallyConsistent)
            before = sigchlds.load(ordering: .sequentiallyConsistent)
            let second = Self.exitingChild()
            if !Self.drive(loop, until: { sigchlds.load(ordering: .sequentiallyConsistent) > before && plainCalls.load(ordering: .sequentiallyConsistent) > 0 }) {
                problems.append("B: source \(sigchlds.load(ordering: .sequentiallyConsistent) - before), B calls \(plainCalls.load(ordering: .sequentiallyConsistent))")
            }
            waitpid(second, &status, 0)
            if infoCalls.load(ordering: .sequentiallyConsistent) != aCalls { problems.append("A was called after B took over") }
            source.invalidate()
            var now = sigaction()
            sigaction(SIGCHLD, nil, &now)
            if Self.handlerAddress(now) != Self.handlerAddress(plain) || now.sa_flags & SA_SIGINFO != 0 {
                problems.append("after the last release SIGCHLD is not B")
            }
            FileHandle.standardError.write(Data("\(problems.isEmpty ? "PASS" : "FAIL: " + problems.joined(separator: "; "))\n".utf8))
            exit(0)
        }
        let text = standardError(result)
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }

    @Test("a handler installed over RunLoopKit's just before the last release stays: the release does not put back the one before")
    func handlerInstalledJustBeforeLastRelease() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = Self.loopOfThisThread()
            Self.install(Self.plainAction(plainHandler))
            let source = EVSource(signal: SIGCHLD) { _ in }
            loop.add(source, forMode: .default)  // chains the plain handler
            loop.run(mode: .default, for: .milliseconds(10))
            // Installed over RunLoopKit's (as GLib's child watch installs its own), and the
            // last source goes before any pass takes SIGCHLD back.
            let later = Self.siginfoAction(infoHandler)
            Self.install(later)
            source.invalidate()
            var now = sigaction()
            sigaction(SIGCHLD, nil, &now)
            let kept = Self.handlerAddress(now) == Self.handlerAddress(later) && now.sa_flags & SA_SIGINFO != 0
            let putBack = Self.handlerAddress(now) == Self.handlerAddress(Self.plainAction(plainHandler))
            FileHandle.standardError.write(Data((
                "\(kept ? "PASS" : "FAIL"): after the last release SIGCHLD's handler is "
                    + "\(kept ? "the one installed last" : putBack ? "the one before, put back over the one installed last" : "neither")\n").utf8))
            exit(0)
        }
        let text = standardError(result)
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }

    @Test("a chaining handler runs once per arrival, while taken back and after the last release")
    func chainingHandlerOncePerArrival() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let loop = Self.loopOfThisThread()
            let source = EVSource(signal: SIGCHLD) { _ in }
            loop.add(source, forMode: .default)
            var previous = sigaction()
            sigaction(SIGCHLD, nil, &previous)
            chain(to: previous)  // RunLoopKit's fan-out
            let chaining = Self.siginfoAction(chainingHandler)
            Self.install(chaining)
            loop.run(mode: .default, for: .milliseconds(50))  // takes the signal back
            // raise() runs the handler on this thread before it returns.
            var before = chainingCalls.load(ordering: .sequentiallyConsistent)
            raise(SIGCHLD)
            let whileClaimed = chainingCalls.load(ordering: .sequentiallyConsistent) - before
            source.invalidate()  // the last release restores the chaining handler
            var now = sigaction()
            sigaction(SIGCHLD, nil, &now)
            let restored = Self.handlerAddress(now) == Self.handlerAddress(chaining)
            before = chainingCalls.load(ordering: .sequentiallyConsistent)
            raise(SIGCHLD)
            let afterRelease = chainingCalls.load(ordering: .sequentiallyConsistent) - before
            FileHandle.standardError.write(Data((
                "\(whileClaimed == 1 && restored && afterRelease == 1 ? "PASS" : "FAIL"): one SIGCHLD ran the chaining handler "
                    + "\(whileClaimed) times while RunLoopKit had the signal, \(afterRelease) times after the last release "
                    + "(\(restored ? "restored" : "not restored"))\n").utf8))
            exit(0)
        }
        let text = standardError(result)
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }
}
