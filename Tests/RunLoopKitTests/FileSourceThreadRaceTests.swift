import Foundation
import Glibc
@testable import RunLoopKit
import Synchronization
import Testing

/// File sources added from one thread while another invalidates them, the loop running on a
/// third: each invalidated source leaves the loop's inotify table, whatever order the add's
/// registration (on the adding thread) and the invalidation's removal (on the loop's
/// thread) took.
@Suite("Real time: file sources added and invalidated across threads", .timeLimit(.minutes(10)))
struct FileSourceThreadRaceTests {
    @Test("a file source invalidated while another thread adds it keeps no share of the directory's watch")
    func invalidatedDuringAnAdd() {
        FileSourceTests.withDirectory { directory in
            let count = 400
            let sources = (0..<count).map { index in
                try! EVSource(watching: directory, label: "race \(index)") { _ in }
            }
            let leaked = onFreshThread { () -> Int in
                let loop = EVRunLoop.current
                loop.add(EVTimer(interval: 3_600, repeats: false) { _ in }, forMode: .default)
                let next = Atomic<Int>(0)
                let finished = Atomic<Int>(0)
                let adder = Thread {
                    for (index, source) in sources.enumerated() {
                        next.store(index + 1, ordering: .releasing)
                        loop.add(source, forMode: .default)
                    }
                    finished.add(1, ordering: .releasing)
                }
                let invalidator = Thread {
                    for (index, source) in sources.enumerated() {
                        // After the add's claim, so that the race is the one named above: an
                        // add of a source invalidated before it is a misuse, which stops the
                        // program (the adder, preempted between its store and its add, let
                        // this thread invalidate first in a ThreadSanitizer run).
                        while next.load(ordering: .acquiring) <= index || source.loop == nil {}
                        source.invalidate()
                    }
                    finished.add(1, ordering: .releasing)
                }
                adder.start()
                invalidator.start()
                // The loop takes the adds and removals until every source is invalidated and
                // nothing is left queued.
                let deadline = ContinuousClock.now + .seconds(20)
                while finished.load(ordering: .acquiring) < 2, ContinuousClock.now < deadline {
                    loop.run(mode: .default, for: .milliseconds(5))
                }
                for _ in 0..<10 { loop.run(mode: .default, for: .milliseconds(1)) }
                return sources.count { loop.engine.inotify.isRegistered($0) }
            }
            #expect(leaked == 0, "\(leaked) of \(count) invalidated sources still registered")
        }
    }
    @Test("a file source invalidated between another thread's add and its watch's registration keeps no watch")
    func invalidatedBeforeRegistration() async {
        await FileSourceTests.withDirectory { directory in
            let fired = Atomic<Int>(0)
            let source = try! EVSource(watching: directory, label: "late") { _ in fired.add(1, ordering: .relaxed) }
            let loop = EVRunLoop.startThread(name: "file-race")
            loop.shared.seams.withLock {
                $0.addBeforeFileRegister = {
                    // The invalidation's removal runs on the loop's thread before the add registers.
                    source.invalidate()
                    let removed = DispatchSemaphore(value: 0)
                    loop.enqueue { _ in removed.signal() }
                    _ = removed.wait(timeout: .now() + 10)
                }
            }
            loop.add(source, forMode: .default)
            loop.shared.seams.withLock { $0.addBeforeFileRegister = nil }
            let added = DispatchSemaphore(value: 0)
            loop.enqueue { _ in added.signal() }
            #expect(await signalled(added, within: .seconds(10)))
            #expect(!loop.engine.inotify.isRegistered(source), "the invalidated source keeps its share of the directory's watch")
            // A change after the invalidation calls nothing.
            _ = FileManager.default.createFile(atPath: directory + "/after", contents: Data())
            let passed = DispatchSemaphore(value: 0)
            loop.add(EVTimer(interval: 0.2, repeats: false) { _ in passed.signal() }, forMode: .default)
            #expect(await signalled(passed, within: .seconds(10)))
            let fires = fired.load(ordering: .relaxed)
            #expect(fires == 0)
            await loop.shutdown()
        }
    }
}
