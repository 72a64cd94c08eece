import Foundation
import Glibc
import RunLoopKit
import Testing

// Embedding.md and the doc comments of EVRunLoop+Polling.swift: run on a thread of their own.
@Suite struct EmbeddingSnippets {
    /// Runs `body` on a new thread and waits for it.
    static func onThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        done.wait()
    }

    @Test func pollLoop() {
        Self.onThread {
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
