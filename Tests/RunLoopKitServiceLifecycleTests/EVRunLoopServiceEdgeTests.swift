#if ServiceLifecycle
import Foundation
import Glibc
import RunLoopKit
import RunLoopKitServiceLifecycle
import ServiceLifecycle
import Synchronization
import Testing

/// The loop service at its edges: a loop shut down before its group runs, a second signal
/// during the shutdown work.
@Suite("Real time loop service edges", .timeLimit(.minutes(5)))
struct EVRunLoopServiceEdgeTests {
    @Test("a loop shut down before its group runs: the graceful shutdown still ends the service")
    func shutDownBefore() async {
        await #expect(processExitsWith: .success) {
            alarm(120)
            let ran = Mutex(false)
            let service = EVRunLoopService(name: "service-test") { _ in ran.withLock { $0 = true } }
            await service.loop.shutdown()
            let (groupStarted, starting) = AsyncStream<Void>.makeStream()
            let group = ServiceGroup(services: [service, StartedSignal(started: starting)])
            let running = Task { try await group.run() }
            for await _ in groupStarted { break }
            await group.triggerGracefulShutdown()
            let ended: Void? = try? await running.value
            exit(ended != nil && !ran.withLock { $0 } ? 0 : 1)
        }
    }

    @Test("a second SIGTERM while onGracefulShutdown runs: the group still ends, once")
    func secondSIGTERM() async {
        await #expect(processExitsWith: .success) {
            alarm(120)
            let runs = Mutex(0)
            let service = EVRunLoopService(name: "service-test") { _ in
                runs.withLock { $0 += 1 }
                kill(getpid(), SIGTERM)
                usleep(300_000)
            }
            let running = await runTrappingSIGTERM(service)
            kill(getpid(), SIGTERM)
            let ended: Void? = try? await running.value
            exit(ended != nil && runs.withLock { $0 } == 1 ? 0 : 1)
        }
    }
}
#endif
