#if ServiceLifecycle
import Glibc
import RunLoopKit
import RunLoopKitServiceLifecycle
import ServiceLifecycle
import Synchronization
import Testing

/// What a loop's timer holds: the test sees it go when the loop lets its timers go.
final class Token: Sendable {}

/// Waits (up to a minute) for the first fire of a repeating timer added to `loop` that holds
/// `token`; true once it fired.
func firstFire(on loop: EVRunLoop, holding token: Token) async -> Bool {
    await withCheckedContinuation { (fired: CheckedContinuation<Bool, Never>) in
        let once = Mutex<CheckedContinuation<Bool, Never>?>(fired)
        let watchdog = EVTimer(interval: .seconds(60), repeats: false) { _ in once.withLock { $0.take() }?.resume(returning: false) }
        let timer = EVTimer(interval: .milliseconds(10), repeats: true) { _ in
            withExtendedLifetime(token) { once.withLock { $0.take() }?.resume(returning: true) }
        }
        loop.add(watchdog, forMode: .common)
        loop.add(timer, forMode: .common)
    }
}

/// A service that tells when its group started it (after the group trapped its signals),
/// then waits for the group's shutdown.
struct StartedSignal: Service {
    let started: AsyncStream<Void>.Continuation

    func run() async throws {
        started.yield()
        try? await gracefulShutdown()
    }
}

/// Runs `service` in a `ServiceGroup` whose graceful shutdown comes on SIGTERM, and returns the
/// group's task once the group has started its services (it traps its signals before that).
func runTrappingSIGTERM(_ service: EVRunLoopService) async -> Task<Void, any Error> {
    let (groupStarted, starting) = AsyncStream<Void>.makeStream()
    let group = ServiceGroup(services: [service, StartedSignal(started: starting)],
                             gracefulShutdownSignals: [.sigterm])
    let running = Task { try await group.run() }
    for await _ in groupStarted { break }
    return running
}

/// A loop on its own thread as a swift-service-lifecycle service, stopped by its group.
@Suite("Real time loop service")
struct EVRunLoopServiceTests {
    @Test("SIGTERM through the group's gracefulShutdownSignals shuts the loop down and ends the group")
    func sigtermShutsTheLoopDown() async {
        // In a child process: the signal goes to the whole process.
        await #expect(processExitsWith: .success) {
            alarm(120)  // a hang fails the test instead of blocking it
            let service = EVRunLoopService(name: "service-test")
            weak var held: Token?
            let started: Bool = await {
                let token = Token()
                held = token
                return await firstFire(on: service.loop, holding: token)
            }()
            let running = await runTrappingSIGTERM(service)
            kill(getpid(), SIGTERM)
            let ended: Void? = try? await running.value
            // The shutdown let go of the loop's timers (their thread has ended).
            exit(started && ended != nil && held == nil ? 0 : 1)
        }
    }

    /// The bits of `signal`'s handler now (`sigaction`): they change when something else
    /// installs its own.
    static func handlerBits(_ signal: Int32) -> UInt {
        var action = sigaction()
        sigaction(signal, nil, &action)
        return withUnsafeBytes(of: &action.__sigaction_handler) { $0.load(as: UInt.self) }
    }

    @Test("a RunLoopKit signal source for a signal the group traps stops the program with a message")
    func signalSourceBesideTheGroup() async {
        // In a child process: the dispositions are the whole process's. Without the check,
        // the group takes SIGTERM from the source (libdispatch's handler replaces RunLoopKit's),
        // the group ends on the signal, and the source never fired.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(120)
            let service = EVRunLoopService(name: "service-test")
            let source = EVSource(signal: SIGTERM) { _ in print("the loop's SIGTERM source fired") }
            service.loop.add(source, forMode: .common)
            // An add from another thread claims the signal on the loop's thread: wait for
            // RunLoopKit's handler (SIGTERM's default action is a handler of all zero bits).
            var ours = Self.handlerBits(SIGTERM)
            for _ in 0..<6_000 where ours == 0 {
                usleep(10_000)
                ours = Self.handlerBits(SIGTERM)
            }
            let running = await runTrappingSIGTERM(service)
            // libdispatch installs the group's handler when its signal source registers, on a
            // queue of its own, so it may come after the service's start (which checks once):
            // wait for it, then let the loop pass (it checks before each wait).
            var waited = 0
            while Self.handlerBits(SIGTERM) == ours && waited < 6_000 {
                usleep(10_000)
                waited += 1
            }
            service.loop.wakeUp()
            usleep(2_000_000)
            kill(getpid(), SIGTERM)
            _ = try? await running.value
            exit(0)
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("signal \(SIGTERM) (SIGTERM) has a signal source"), "\(text)")
        #expect(text.contains("ServiceGroup"), "\(text)")
    }

    @Test("a graceful shutdown triggered on the group shuts the loop down; its timers go")
    func triggeredShutdown() async throws {
        let service = EVRunLoopService(name: "service-test")
        weak var held: Token?
        let started: Bool = await {
            let token = Token()
            held = token
            return await firstFire(on: service.loop, holding: token)
        }()
        #expect(started)
        let group = ServiceGroup(services: [service])
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(held == nil, "the loop's thread let go of its timers")
    }

    @Test("onGracefulShutdown runs once on the loop's thread at the graceful shutdown, before the loop shuts down")
    func onGracefulShutdown() async throws {
        let ran = Mutex((count: 0, onLoopThread: false, loopRunning: false))
        let service = EVRunLoopService(name: "service-test") { loop in
            ran.withLock { $0 = ($0.count + 1, EVRunLoop.current === loop, !loop.isStopRequested) }
        }
        let group = ServiceGroup(services: [service])
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await running.value
        let seen = ran.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.onLoopThread)
        #expect(seen.loopRunning)
    }

    @Test("cancelling the group's task shuts the loop down too, without onGracefulShutdown")
    func cancellation() async throws {
        let ranAtShutdown = Mutex(false)
        let service = EVRunLoopService(name: "service-test") { _ in ranAtShutdown.withLock { $0 = true } }
        weak var held: Token?
        let started: Bool = await {
            let token = Token()
            held = token
            return await firstFire(on: service.loop, holding: token)
        }()
        #expect(started)
        let group = ServiceGroup(services: [service])
        let running = Task { try await group.run() }
        running.cancel()
        _ = try? await running.value
        #expect(held == nil, "the loop's thread let go of its timers")
        #expect(!ranAtShutdown.withLock { $0 })
    }

    @Test("the documented use compiles and runs: a ticking loop that SIGTERM ends")
    func documentedUse() async {
        await #expect(processExitsWith: .success) {
            alarm(120)
            // A SIGTERM every 100 ms: one sent before the group trapped the signal would end
            // the process, so the signal is ignored until the group's own handling replaces that.
            signal(SIGTERM, SIG_IGN)
            Task {
                while true {
                    try? await Task.sleep(for: .milliseconds(100))
                    kill(getpid(), SIGTERM)
                }
            }
            // snippet: service
            let service = EVRunLoopService(name: "runloop")
            service.loop.add(EVTimer(interval: .seconds(1), repeats: true) { _ in print("tick") }, forMode: .common)
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm])
            try await group.run()  // returns once SIGTERM has shut the loop down
            // end
        }
    }

    @Test("README.md's service quick start compiles and runs: SIGTERM runs its shutdown work and ends it")
    func readmeQuickStart() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            alarm(120)
            signal(SIGTERM, SIG_IGN)  // as in documentedUse: until the group traps it
            Task {
                while true {
                    try? await Task.sleep(for: .milliseconds(100))
                    kill(getpid(), SIGTERM)
                }
            }
            // snippet: readme-service
            // The loop's SIGTERM work runs on its thread at the group's graceful shutdown.
            let service = EVRunLoopService(name: "runloop") { _ in print("shutting down") }
            service.loop.add(EVTimer(interval: .seconds(1), repeats: true) { _ in print("tick") }, forMode: .common)
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm])
            try await group.run()  // returns once SIGTERM has shut the loop down
            // end
        }
        let output = result.map { String(decoding: $0.standardOutputContent, as: UTF8.self) } ?? ""
        #expect(output.contains("shutting down"), "\(output)")
    }
}
#endif
