import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

private func floodHandler(_ signal: Int32) {}

/// Children exiting in a flood while another thread keeps installing its own SIGCHLD
/// handler over RunLoopKit's, and each pass takes the signal back (issue 35, item 11).
@Suite("Real time: SIGCHLD taken back during a flood of exits", .timeLimit(.minutes(2)))
struct SignalChainFloodTests {
    static func loopOfThisThread() -> EVRunLoop { EVRunLoop.current }

    @Test("without pidfd_open, 60 children exit at once while a handler is installed over and over: every child source sees its exit")
    func floodWhileTakingBack() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            guard SignalChainTests.withoutPidfdOpen() else { exit(0) }
            let loop = Self.loopOfThisThread()
            let (readEnd, writeEnd) = makePipe()
            var pids: [pid_t] = []
            for _ in 0..<60 {
                let pid = fork()
                if pid == 0 {
                    close(writeEnd)
                    var byte: UInt8 = 0
                    _ = read(readEnd, &byte, 1)
                    _exit(5)
                }
                pids.append(pid)
            }
            close(readEnd)
            let seen = Atomic<Int>(0)
            let sources = pids.map { pid in
                try! EVSource(childProcess: pid) { _ in seen.add(1, ordering: .sequentiallyConsistent) }
            }
            for source in sources { loop.add(source, forMode: .default) }
            loop.run(mode: .default, for: .milliseconds(50))
            let stop = Atomic<Bool>(false)
            let installer = Thread {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = floodHandler
                action.sa_flags = SA_RESTART
                while !stop.load(ordering: .sequentiallyConsistent) {
                    sigaction(SIGCHLD, &action, nil)
                    usleep(200)
                }
            }
            installer.start()
            close(writeEnd)  // every child exits now
            let start = Date()
            while seen.load(ordering: .sequentiallyConsistent) < pids.count, Date().timeIntervalSince(start) < 10 {
                loop.run(mode: .default, for: .milliseconds(5), returnAfterSourceHandled: true)
            }
            stop.store(true, ordering: .sequentiallyConsistent)
            let count = seen.load(ordering: .sequentiallyConsistent)
            FileHandle.standardError.write(Data("\(count == pids.count ? "PASS" : "FAIL"): \(count) of \(pids.count) child sources saw their exit in 10 s\n".utf8))
            withExtendedLifetime(sources) { exit(0) }
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        print(text)
        #expect(text.hasPrefix("PASS"), "\(text)")
    }
}
