import Dispatch
import Foundation
import Glibc
import RunLoopKit
import Testing

/// A signal source whose signal another part of the program takes over (`signal()`,
/// `sigaction()`, a `DispatchSource` signal source such as swift-service-lifecycle's
/// `ServiceGroup` makes) would never fire again: the loop stops the program with a message
/// instead. Each runs in a child process, since dispositions are the whole process's.
@Suite("Real time: a signal taken from its sources", .timeLimit(.minutes(10)))
struct SignalTakeoverTests {
    /// The standard error an exit test observed, as text.
    /// A loop on a thread of its own with a source for `signal` in its default mode.
    static func loopWatching(_ signal: Int32) -> LoopThread {
        let thread = LoopThread()
        _ = thread.onLoop {
            let source = EVSource(signal: signal) { _ in }
            thread.loop.add(source, forMode: .default)
            return source
        }
        return thread
    }

    /// Wakes `thread`'s loop 20 times, 100 ms apart: each pass checks the dispositions.
    static func passes(of thread: LoopThread) {
        for _ in 0..<20 {
            thread.loop.wakeUp()
            usleep(100_000)
        }
    }

    @Test("a watched signal set to SIG_IGN behind the loop's back stops the program with a message")
    func ignoredBehindItsBack() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = Self.loopWatching(SIGUSR2)
            signal(SIGUSR2, SIG_IGN)
            // The loop's next passes find the disposition changed; a program still running
            // after them has a source that would never fire.
            Self.passes(of: thread)
            exit(0)
        }
        let text = standardError(result)
        #expect(text.contains("signal \(SIGUSR2) (SIGUSR2)"), "\(text)")
        #expect(text.contains("now ignored (SIG_IGN)"), "\(text)")
    }

    /// The idiom of daemons that want no zombies: the kernel then reaps every child at its
    /// exit, and neither a `SIGCHLD` source nor a child source can learn of one.
    @Test("SIGCHLD set to SIG_IGN behind its source's back: the message says what that does and what to do instead")
    func childSignalIgnored() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = Self.loopWatching(SIGCHLD)
            signal(SIGCHLD, SIG_IGN)
            Self.passes(of: thread)
            exit(0)
        }
        let text = standardError(result)
        #expect(text.contains("signal \(SIGCHLD) (SIGCHLD)"), "\(text)")
        #expect(text.contains("now ignored (SIG_IGN)"), "\(text)")
        #expect(text.contains("the kernel reaps every child"), "\(text)")
        #expect(text.contains("EVSource(childProcess:"), "\(text)")
        #expect(!text.contains("ServiceGroup"), "\(text)")
    }

    /// SIGUSR2 as a ServiceGroup's signal would be; SIGCHLD, which is taken back from other
    /// handlers but not from libdispatch's: its signalfd takes an arrival before the loop's
    /// handler runs about as often as not, and the loop's sources would miss those.
    @Test("a DispatchSource taking a watched signal (a ServiceGroup's way on Linux) stops the program with a message",
          arguments: [SIGUSR2, SIGCHLD])
    func dispatchSourceTakesIt(signal: Int32) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [signal] in
            let thread = Self.loopWatching(signal)
            // libdispatch installs its own handler for the signal when the source registers.
            let registered = DispatchSemaphore(value: 0)
            let dispatchSource = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            dispatchSource.setRegistrationHandler { registered.signal() }
            dispatchSource.resume()
            _ = registered.wait(timeout: .now() + 60)
            Self.passes(of: thread)
            withExtendedLifetime(dispatchSource) { exit(0) }
        }
        let text = standardError(result)
        let name = signal == SIGCHLD ? "SIGCHLD" : "SIGUSR2"
        #expect(text.contains("signal \(signal) (\(name))"), "\(text)")
        #expect(text.contains("another handler"), "\(text)")
    }

    @Test("adding a source for a signal taken behind the loops' backs stops the program with a message")
    func addAfterTakeover() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = Self.loopWatching(SIGUSR1)
            signal(SIGUSR1, SIG_DFL)
            // On the loop's thread, before its next pass: the add finds it.
            _ = thread.onLoop {
                let second = EVSource(signal: SIGUSR1) { _ in }
                thread.loop.add(second, forMode: .default)
                return second
            }
            exit(0)
        }
        let text = standardError(result)
        #expect(text.contains("signal \(SIGUSR1) (SIGUSR1)"), "\(text)")
        #expect(text.contains("now the default action (SIG_DFL)"), "\(text)")
    }
}
