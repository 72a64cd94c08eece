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
            let (groupStarted, starting) = AsyncStream<Void>.makeStream()
            let group = ServiceGroup(services: [service, StartedSignal(started: starting)],
                                     gracefulShutdownSignals: [.sigterm])
            let running = Task { try await group.run() }
            // The group traps its signals before it starts its services.
            for await _ in groupStarted { break }
            kill(getpid(), SIGTERM)
            let ended: Void? = try? await running.value
            // The shutdown let go of the loop's timers (their thread has ended).
            exit(started && ended != nil && held == nil ? 0 : 1)
        }
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

    @Test("cancelling the group's task shuts the loop down too")
    func cancellation() async throws {
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
        running.cancel()
        _ = try? await running.value
        #expect(held == nil, "the loop's thread let go of its timers")
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
}
#endif
