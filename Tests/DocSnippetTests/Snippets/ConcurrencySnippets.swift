import Dispatch
import Glibc
import RunLoopKit

// Concurrency.md and the concurrency doc comments: compiled, not run (they run the main loop).
enum ConcurrencySnippets {
    static func mainQueueAndMainActor() {
        // snippet: concurrency-main-queue
        // main.swift: a synchronous main. No top-level `await`.
        DispatchQueue.main.async { print("main queue") }
        DispatchQueue.main.asyncAfter(deadline: .now() + 0.1) { print("later") }
        Task { @MainActor in print("main actor") }
        Task.detached { await MainActor.run { print("hopped to the main actor") } }
        EVRunLoop.main.run(mode: .default, for: .seconds(2))
        // end
    }

    // snippet: concurrency-pinned-actor
    actor Dashboard {
        let loop: EVRunLoop
        var ticks = 0
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

        init(loop: EVRunLoop) { self.loop = loop }

        func start() {
            let timer = EVTimer(interval: 1, repeats: true, block: EVRunLoop.isolated { _ in
                self.ticks += 1  // the actor's state, from the loop's timer
            })
            loop.add(timer, forMode: .default)
        }
    }
    // end

    // snippet: concurrency-main-actor-model
    @MainActor final class Model {
        var count = 0
        func start() {
            EVRunLoop.main.add(EVTimer(interval: 0.5, repeats: true, block: EVRunLoop.isolated { _ in
                self.count += 1
            }), forMode: .common)
        }
    }
    // end

    enum IsolatedDoc {
        // snippet: isolated-doc-model
        @MainActor final class Model {
            var ticks = 0
            func start() {
                let timer = EVTimer(interval: 1, repeats: true, block: EVRunLoop.isolated { _ in
                    self.ticks += 1  // main-actor state, no assumeIsolated, no unchecked box
                })
                EVRunLoop.main.add(timer, forMode: .common)
            }
        }
        // end
    }

    enum ExecutorDoc {
        // snippet: executor-doc-actor
        actor Dashboard {
            let loop: EVRunLoop
            nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
            init(loop: EVRunLoop) { self.loop = loop }
        }
        // end

        static func preferLoop(_ loop: EVRunLoop) {
            // snippet: executor-doc-task
            Task(executorPreference: loop) { /* nonisolated async code, on the loop's thread */ }
            // end
        }
    }

    static func sleepOnLoopClock(_ loop: EVRunLoop) async throws {
        // snippet: clock-doc-sleep
        let clock = loop.clock   // the loop runs on its own thread
        try await clock.sleep(for: .milliseconds(200), tolerance: .milliseconds(100))
        // end
    }

    static func sourceEvents(loop: EVRunLoop, socket: Int32) async throws {
        // snippet: concurrency-source-events
        for try await _ in loop.readiness(of: socket) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(socket, &buffer, buffer.count)  // read before asking for more
            guard count > 0 else { break }
            print("read \(count) bytes")
        }
        // end
    }
}
