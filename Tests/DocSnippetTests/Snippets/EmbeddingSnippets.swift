import Foundation
import Glibc
import RunLoopKit
import Testing

// Embedding.md and the doc comments of EVRunLoop+Polling.swift and EVRunLoop+Thread.swift
// (the async main is Examples/loop-thread): run.
@Suite struct EmbeddingSnippets {
    /// Runs `body` on a new thread and suspends the caller until it returns, holding no thread
    /// of the cooperative pool meanwhile (the body waits for a real timer).
    static func onThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                body()
                done.resume()
            }.start()
        }
    }

    @Test func loopThread() async {
        // snippet: embedding-thread
        let loop = EVRunLoop.startThread(name: "worker")
        let timer = EVTimer(interval: 0.5, repeats: true, tolerance: 0.05) { _ in print("tick") }
        loop.add(timer, forMode: .common)
        try? await loop.clock.sleep(for: .seconds(2))
        await loop.shutdown()
        // end
        timer.invalidate()
    }

    @Test func pollLoop() async {
        await Self.onThread {
            // snippet: polling-doc
            let loop = EVRunLoop.current
            loop.add(EVTimer(interval: 0.1, repeats: false) { _ in print("fired") }, forMode: .default)
            var watch = pollfd(fd: loop.pollDescriptor, events: Int16(POLLIN), revents: 0)
            var result: EVRunLoop.RunResult?
            while result == nil {
                let deadline = loop.preparePolledPass(mode: .default)
                _ = poll(&watch, 1, deadline.milliseconds(from: loop.now))  // the other loop's wait
                result = loop.dispatchPolledPass()
            }
            // end
            #expect(result == .finished)
        }
    }
}
