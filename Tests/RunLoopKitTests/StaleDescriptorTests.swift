import Foundation
import Glibc
import RunLoopKit
import Testing

/// A descriptor closed while a source watches it, whose number then names another file
/// (issue 27): the stale source reports the error and never fires for the new file, whichever
/// is armed first. Each runs in a child process, since a stale watch could make libev abort.
@Suite("Stale descriptors", .timeLimit(.minutes(10)))
struct StaleDescriptorTests {
    /// What the stale source's handler saw.
    final class Calls: Sendable {
        let errors = LoopBox(0)
        let fires = LoopBox(0)
        func record(_ source: EVSource) {
            if source.error != nil { errors.value += 1 } else { fires.value += 1 }
        }
    }

    /// Closes `number` and opens a pipe whose read end takes it, in one step (`dup2`), so
    /// that no other thread can take the number in between; or exits 3.
    static func pipe(reusing number: Int32) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0, dup2(fds[0], number) == number else { exit(3) }
        close(fds[0])
        return (number, fds[1])
    }

    /// A source reading one byte per callout, counting them.
    static func reader(_ fd: Int32, _ reads: LoopBox<Int>) -> EVSource {
        try! EVSource(fileDescriptor: fd) { _ in
            var byte: UInt8 = 0
            if read(fd, &byte, 1) == 1 { reads.value += 1 }
        }
    }

    @Test("a new source on the reused number, added while the stale one is armed")
    func newSourceWhileStaleArmed() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            var old: [Int32] = [0, 0]
            guard Glibc.pipe(&old) == 0 else { exit(3) }
            let calls = Calls()
            let stale = try! EVSource(fileDescriptor: old[0]) { calls.record($0) }
            loop.add(stale, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))  // watched
            let new = StaleDescriptorTests.pipe(reusing: old[0])  // closes the stale one's file
            close(old[1])
            let reads = LoopBox(0)
            loop.add(StaleDescriptorTests.reader(new.read, reads), forMode: .default)
            _ = write(new.write, "x", 1)
            for _ in 0..<3 { loop.run(mode: .default, for: .milliseconds(30)) }
            exit(calls.fires.value == 0 && calls.errors.value == 1 && !stale.isValid && reads.value == 1 ? 0 : 2)
        }
    }

    @Test("the stale source re-armed after a new source took its number")
    func staleRearmedAfterNewSource() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: "other")
            var old: [Int32] = [0, 0]
            guard Glibc.pipe(&old) == 0 else { exit(3) }
            let calls = Calls()
            let stale = try! EVSource(fileDescriptor: old[0]) { calls.record($0) }
            loop.add(stale, forMode: "other")
            loop.run(mode: "other", for: .milliseconds(10))  // watched
            let new = StaleDescriptorTests.pipe(reusing: old[0])  // closes the stale one's file
            close(old[1])
            let reads = LoopBox(0)
            loop.add(StaleDescriptorTests.reader(new.read, reads), forMode: .common)
            _ = write(new.write, "xy", 2)
            loop.run(mode: .default, for: .milliseconds(30))  // the new source first
            for _ in 0..<3 { loop.run(mode: "other", for: .milliseconds(30)) }  // then the stale one
            exit(calls.fires.value == 0 && calls.errors.value == 1 && !stale.isValid && reads.value == 2 ? 0 : 2)
        }
    }
}
