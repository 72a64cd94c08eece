internal import CRunLoopKitLibev
import Foundation
import Glibc
import RunLoopKit
import Synchronization
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

    /// A flag set on one thread and read on another.
    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
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

    /// Every kind of descriptor × every moment of its closing (``CloseMoment``): the number
    /// is taken by a new file of the same kind, made readable, with a source of its own; the
    /// stale source must never be called for it (exit 2 counts such callouts), and reports
    /// the error once instead.
    @Test("a closed descriptor's source never fires for the file that took its number",
          arguments: StaleKind.allCases, CloseMoment.allCases)
    func neverFiresForTheNewFile(kind: StaleKind, moment: CloseMoment) async {
        await #expect(processExitsWith: .success) { [kind, moment] in
            StaleDescriptorTests.closeUnderSource(kind, moment, newSource: true)
        }
    }

    /// ``neverFiresForTheNewFile(kind:moment:)`` with no source on the new file: nothing
    /// makes the loop watch the number again, but the stale source still must not be called
    /// for the new file (the loop may not notice the close at all: that is the rule's part,
    /// ``EVSource/checksInvalidateBeforeClose``).
    @Test("a closed descriptor's source never fires for an unwatched file that took its number",
          arguments: StaleKind.allCases, CloseMoment.allCases)
    func neverFiresForAnUnwatchedNewFile(kind: StaleKind, moment: CloseMoment) async {
        await #expect(processExitsWith: .success) { [kind, moment] in
            StaleDescriptorTests.closeUnderSource(kind, moment, newSource: false)
        }
    }

    /// The scenario of ``neverFiresForTheNewFile(kind:moment:)``, in the child process: exits
    /// 0, or 2 if the stale source was called for the new file, 4 if it reported its error
    /// more than once or (with `newSource`) not at all, 5 if (with `newSource`) it is still
    /// valid, 6 if the new file's source never fired.
    static func closeUnderSource(_ kind: StaleKind, _ moment: CloseMoment, newSource: Bool) -> Never {
        let loop = currentLoopOfThisThread()
        let other: EVRunLoop.Mode = "other"
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .common)
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: other)
        let thread = pthread_self()
        if kind == .signalfd {  // pending on the loop's thread, for its signalfds
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGWINCH)
            pthread_sigmask(SIG_BLOCK, &set, nil)
        }
        let old = StaleSpecimen(kind, loopThread: thread)
        let number = old.fd
        let reused = Flag()
        let wrong = LoopBox(0), errors = LoopBox(0), fresh = LoopBox(0)
        let stale = try! EVSource(fileDescriptor: number, label: "stale") { source in
            if source.error != nil {
                errors.value += 1
            } else if reused.value.load(ordering: .acquiring) {
                wrong.value += 1
            } else {
                old.drain()
            }
        }
        // What takes the number: a new file of the kind, readable, with a source of its own.
        let takeNumber: @Sendable () -> Void = {
            let new = StaleSpecimen(kind, loopThread: thread)
            new.move(to: number)
            reused.value.store(true, ordering: .releasing)
            if moment == .oldFileStillOpen { old.makeReady() } else { old.closePeer() }
            new.makeReady()
            guard newSource else { return }
            loop.add(try! EVSource(fileDescriptor: number, label: "new") { source in
                fresh.value += 1
                new.drain()
                source.invalidate()
            }, forMode: .common)
        }
        // The loop sleeps on a regular file's source only while another mode runs.
        let staleMode = moment == .modeOut || (moment == .otherThread && kind == .regularFile) ? other : .default
        switch moment {
        case .modeOut:
            loop.add(stale, forMode: other)
            old.makeReady()
            old.awaitReady()
            loop.run(mode: other, for: .milliseconds(10))  // watched: fires for its own file
            loop.run(mode: .default, for: .milliseconds(10))  // unwatched
            takeNumber()
        case .betweenRuns, .oldFileStillOpen:
            loop.add(stale, forMode: .default)
            old.makeReady()
            old.awaitReady()
            loop.run(mode: .default, for: .milliseconds(10))  // watched: fires for its own file
            if moment == .oldFileStillOpen { old.keepOpen() }
            old.makeReady()
            old.awaitReady()
            takeNumber()
        case .inPass:
            let trigger = StaleSpecimen(.pipe, loopThread: thread)
            let taken = LoopBox(false)
            loop.add(try! EVSource(fileDescriptor: trigger.fd, label: "trigger") { _ in
                trigger.drain()
                if !taken.value { taken.value = true; takeNumber() }
            }, forMode: .default)  // added first: fires first in the pass
            loop.add(stale, forMode: .default)
            old.makeReady()
            old.awaitReady()
            trigger.makeReady()
            loop.run(mode: .default, for: .milliseconds(10))  // one wait reports both ready
        case .otherThread:
            loop.add(stale, forMode: staleMode)
            loop.run(mode: staleMode, for: .milliseconds(10))  // watched
            let closer = Thread {
                usleep(30_000)  // the loop is asleep by then (if not, the close is no less concurrent)
                takeNumber()
            }
            closer.start()
            let deadline = clibev_monotonic_ns() + 10_000_000_000
            while (newSource ? fresh.value == 0 : !reused.value.load(ordering: .acquiring))
                && clibev_monotonic_ns() < deadline {
                loop.run(mode: .default, for: .milliseconds(20))
            }
        }
        for mode in [EVRunLoop.Mode.default, other, .default, staleMode] {
            for _ in 0..<3 { loop.run(mode: mode, for: .milliseconds(20)) }
        }
        if wrong.value > 0 {
            FileHandle.standardError.write(Data("\(kind) \(moment): \(wrong.value) callouts for the new file\n".utf8))
            exit(2)
        }
        guard newSource else { exit(errors.value > 1 ? 4 : 0) }
        exit(errors.value != 1 ? 4 : stale.isValid ? 5 : fresh.value == 0 ? 6 : 0)
    }

    /// A watched eventfd closed (its number left free) and a pass run in the same mode: no
    /// file took the number, so nothing reaches epoll or the source, and the loop stays
    /// silent (exit 0, the source valid and never called) unless the rule is checked.
    static func closeWatchedEventfd(checked: Bool) -> Never {
        EVSource.checksInvalidateBeforeClose = checked
        let loop = currentLoopOfThisThread()
        loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
        let fd = clibev_eventfd_create()
        let calls = LoopBox(0)
        let source = try! EVSource(fileDescriptor: fd, label: "counter") { _ in calls.value += 1 }
        loop.add(source, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(10))  // watched
        close(fd)
        for _ in 0..<3 { loop.run(mode: .default, for: .milliseconds(10)) }
        exit(calls.value == 0 && source.isValid ? 0 : 2)
    }

    @Test("unchecked, a descriptor closed under its watching source goes unnoticed")
    func closeGoesUnnoticed() async {
        await #expect(processExitsWith: .success) {
            StaleDescriptorTests.closeWatchedEventfd(checked: false)
        }
    }

    @Test("checksInvalidateBeforeClose: a descriptor closed under its watching source stops the program")
    func closeUnderSourceReported() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            StaleDescriptorTests.closeWatchedEventfd(checked: true)
        }
        let text = standardError(result)
        #expect(text.contains("EVSource 'counter' EVSource(fileDescriptor: "))
        // "… closed and its number reused …" when another thread of the child opened a file
        // in between and took the number: the check names either, and both stop the program.
        #expect(text.contains("the descriptor was closed while the source was in a loop")
                || text.contains("the descriptor was closed and its number reused while the source was in a loop"))
        #expect(text.contains("invalidate a descriptor source before closing its descriptor"))
    }

    @Test("checksInvalidateBeforeClose: a number taken by another eventfd stops the program at the re-arm")
    func reuseReportedAtRearm() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            EVSource.checksInvalidateBeforeClose = true
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .common)
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: "other")
            let fd = clibev_eventfd_create()
            loop.add(try! EVSource(fileDescriptor: fd, label: "stale") { _ in }, forMode: "other")
            loop.run(mode: "other", for: .milliseconds(10))  // watched
            loop.run(mode: .default, for: .milliseconds(10))  // unwatched
            let new = clibev_eventfd_create()
            guard dup2(new, fd) == fd else { exit(3) }  // closes the source's eventfd
            loop.run(mode: "other", for: .milliseconds(10))
            exit(0)
        }
        #expect(standardError(result).contains("the descriptor was closed and its number reused while the source"))
    }

    @Test("the loop keeps no reference to a watched file: closing a socket still ends it for the peer")
    func closeEndsTheFile() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { exit(3) }
            let source = try! EVSource(fileDescriptor: fds[0], closesDescriptor: true) { _ in }
            loop.add(source, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(10))  // watched, and its file registered
            source.invalidate()  // closes fds[0]
            var byte: UInt8 = 0
            var entry = pollfd(fd: fds[1], events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 5_000) == 1 else { exit(2) }
            exit(read(fds[1], &byte, 1) == 0 ? 0 : 4)  // end of file: the peer is gone
        }
    }

    @Test("descriptorIsCurrent tells an eventfd from the eventfd that took its number")
    func descriptorIsCurrentSeesReuse() async {
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            let fd = clibev_eventfd_create()
            let source = try! EVSource(fileDescriptor: fd) { _ in }
            loop.add(source, forMode: .default)
            guard source.descriptorIsCurrent else { exit(2) }
            guard dup2(clibev_eventfd_create(), fd) == fd else { exit(3) }  // closes the source's eventfd
            exit(source.descriptorIsCurrent ? 4 : 0)
        }
    }
}
