import CRunLoopKitGLib
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitGLib
import RunLoopKitTestSupport
import Synchronization
import Testing

/// The fork half of the lifecycle matrix for GLib's kinds (issue 35): `fork()` from each
/// state of a loop that hosts a GLib context (``EVGLibHost``) or is attached to one
/// (``EVGLibAttachment``). In the child the loop and GLib go on with the loop's own kernel
/// objects (a RunLoopKit timer and a GLib timeout both fire), or, when the loop's thread is
/// not in the child, calls on the loop are harmless; the parent is never disturbed (its 300 ms
/// timer and 300 ms GLib timeout fire on time). Each scenario runs in a child process of the
/// test runner and forks there.
@Suite("Real time: fork with GLib hosted or attached", .timeLimit(.minutes(10)))
struct GLibForkTests {
    @Test("fork() from a state, GLib hosted or attached", arguments: GLibForkScenario.State.allCases, GLibForkScenario.Kind.allCases)
    func forkFrom(_ state: GLibForkScenario.State, with kind: GLibForkScenario.Kind) async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [state, kind] in
            GLibForkScenario(state: state, kind: kind).run()
        }
        let (passed, text) = ForkedScenario.outcome(saying: result?.standardErrorContent)
        print("\(state), \(kind):", text)
        #expect(passed, "\(text)")
    }
}

/// One scenario of ``GLibForkTests``, run in a process of its own.
struct GLibForkScenario {
    /// Where the loop is when `fork()` is called.
    enum State: String, Codable, CaseIterable, Sendable {
        /// Between runs (hosted) or GLib iterations (attached); the loop's thread forks.
        case idle
        /// Running on another thread; this thread forks.
        case asleepOnAnotherThread
        /// In a RunLoopKit timer's callout; the callout forks.
        case inCallout
        /// In a callout of a run nested in a callout; the inner callout forks.
        case inNestedRun
    }

    /// How the loop and GLib share the thread.
    enum Kind: String, Codable, CaseIterable, Sendable {
        /// `loop.host(context)`: the loop's runs iterate GLib.
        case host
        /// `loop.attach(to: context)`: GLib's iterations run the loop.
        case attachment
    }

    let state: State
    let kind: Kind

    /// When each timer of this process fired, after the fork.
    final class Progress: Sendable {
        struct Values {
            var forkedAt: ContinuousClock.Instant?
            var isChild = false
            var timerAfter: Duration?
            var glibAfter: Duration?
        }
        let values = Mutex(Values())
        func update(_ body: (inout Values) -> Void) { values.withLock { body(&$0) } }
        var snapshot: Values { values.withLock { $0 } }
        var isDone: Bool { snapshot.timerAfter != nil && snapshot.glibAfter != nil }
    }


    /// The loop's thread's part of a scenario: the context, hosted or attached, and its
    /// iteration.
    final class World: @unchecked Sendable {
        // Safe: used on the loop's thread only (the forking thread in the child, once forked).
        let loop: EVRunLoop
        let context: OpaquePointer
        let kind: Kind
        var host: EVGLibHost?
        var attachment: EVGLibAttachment?
        var calls: [GLibCall] = []

        init(kind: Kind) {
            self.kind = kind
            loop = EVRunLoop.current
            context = g_main_context_new()
            switch kind {
            case .host: host = loop.host(context, in: [.default])
            case .attachment: attachment = loop.attach(to: context)
            }
            // Work on both sides before the fork: a RunLoopKit timer and a GLib timeout.
            loop.add(EVTimer(interval: .milliseconds(50), repeats: true) { _ in }, forMode: .default)
            let tick = GLibCall { true }
            calls.append(tick)
            attachTimeout(50, to: context, tick)
        }

        /// One step of whichever loop is in control.
        func step() {
            switch kind {
            case .host: loop.run(mode: .default, for: .milliseconds(20))
            case .attachment: g_main_context_iteration(context, 1)
            }
        }

        /// A RunLoopKit timer and a GLib timeout of `interval`, from now, recorded in `progress`.
        func addTimers(_ interval: Duration, progress: Progress) {
            let start = ContinuousClock.now
            loop.add(EVTimer(interval: interval, repeats: false) { _ in
                progress.update { $0.timerAfter = ContinuousClock.now - start }
            }, forMode: .default)
            let glib = GLibCall {
                progress.update { $0.glibAfter = ContinuousClock.now - start }
                return false
            }
            calls.append(glib)
            attachTimeout(UInt32(interval / .milliseconds(1)), to: context, glib)
        }
    }

    /// Right after the fork, on the loop's thread.
    static func afterFork(_ world: World, isChild: Bool, progress: Progress) {
        progress.update {
            $0.forkedAt = ContinuousClock.now
            $0.isChild = isChild
        }
        world.addTimers(isChild ? .milliseconds(20) : .milliseconds(300), progress: progress)
    }

    func verdict(_ values: Progress.Values) -> Int32 {
        let side = values.isChild ? "child" : "parent"
        guard let timer = values.timerAfter, let glib = values.glibAfter else {
            ForkedScenario.say("\(side): RunLoopKit timer after \(String(describing: values.timerAfter)), GLib timeout after \(String(describing: values.glibAfter))")
            return 11
        }
        let onTime = { (late: Duration) in late >= .milliseconds(300) && late < .milliseconds(1_000) }
        if !values.isChild && !(onTime(timer) && onTime(glib)) {
            ForkedScenario.say("parent: its 300 ms timer fired after \(timer), its 300 ms GLib timeout after \(glib)")
            return 12
        }
        return 0
    }

    func run() -> Never {
        let progress = Progress()
        if state == .asleepOnAnotherThread {
            // The loop's thread steps until told to stop; this thread forks meanwhile.
            let made = Mutex<EVRunLoop?>(nil)
            let stopping = Atomic<Bool>(false)
            let ended = DispatchSemaphore(value: 0)
            let kind = kind
            Thread.detachNewThread {
                let world = World(kind: kind)
                made.withLock { $0 = world.loop }
                var added = false
                while !stopping.load(ordering: .acquiring) {
                    world.step()
                    if !added, progress.snapshot.forkedAt != nil {
                        added = true
                        GLibForkScenario.afterFork(world, isChild: false, progress: progress)
                    }
                }
                // The host's or attachment's observers and sources hold its state: let go
                // of them, or the ended thread's world is a cycle nobody reaches.
                world.host?.unhost()
                world.attachment?.detach()
                ended.signal()
            }
            while made.withLock({ $0 }) == nil { usleep(1_000) }
            let loop = made.withLock { $0! }
            usleep(30_000)
            let child = fork()
            if child == 0 {
                loop.perform { _exit(20) }
                loop.wakeUp()
                loop.stop()
                _exit(0)
            }
            progress.update { $0.forkedAt = ContinuousClock.now }
            let end = ContinuousClock.now + .seconds(5)
            while !progress.isDone, ContinuousClock.now < end { usleep(2_000) }
            stopping.store(true, ordering: .releasing)
            loop.wakeUp()
            ended.wait()
            let mine = verdict(progress.snapshot)
            let childStatus = ForkedScenario.reapChild(child)
            ForkedScenario.finish(mine == 0 && childStatus == 0)
        }
        let world = World(kind: kind)
        for _ in 0..<3 { world.step() }  // the loop's kernel objects in use
        var child: pid_t = -1
        switch state {
        case .idle:
            child = fork()
            Self.afterFork(world, isChild: child == 0, progress: progress)
        case .inCallout, .inNestedRun:
            let nested = state == .inNestedRun
            let forked = Mutex<pid_t?>(nil)
            let forkNow: @Sendable () -> Void = {
                let pid = fork()
                forked.withLock { $0 = pid }
                GLibForkScenario.afterFork(world, isChild: pid == 0, progress: progress)
            }
            world.loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in
                guard nested else { return forkNow() }
                world.loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in forkNow() }, forMode: .default)
                // Until the loop's timer fired (an attached loop's nested run does not
                // iterate GLib: GLib blocks the loop's source while it dispatches it).
                let end = ContinuousClock.now + .seconds(5)
                while progress.snapshot.timerAfter == nil, ContinuousClock.now < end {
                    world.loop.run(mode: .default, for: .milliseconds(20))
                }
            }, forMode: .default)
            let end = ContinuousClock.now + .seconds(2)
            while forked.withLock({ $0 }) == nil, ContinuousClock.now < end { world.step() }
            child = forked.withLock { $0 } ?? -2
        case .asleepOnAnotherThread:
            fatalError("handled above")
        }
        let end = ContinuousClock.now + .seconds(5)
        while !progress.isDone, ContinuousClock.now < end { world.step() }
        let mine = verdict(progress.snapshot)
        if child == 0 {
            // The child goes on with a later deadline while the parent waits for its 300 ms:
            // on shared kernel objects, that deadline would replace the parent's.
            world.addTimers(.seconds(2), progress: Progress())
            let lingerEnd = ContinuousClock.now + .milliseconds(500)
            while ContinuousClock.now < lingerEnd { world.step() }
            _exit(mine)
        }
        let childStatus = ForkedScenario.reapChild(child)
        ForkedScenario.finish(mine == 0 && childStatus == 0)
    }
}
