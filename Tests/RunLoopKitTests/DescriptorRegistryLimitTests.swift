internal import CRunLoopKitLibev
import Foundation
import Glibc
import RunLoopKit
import Testing

/// The loop's ``DescriptorRegistry`` when the process has no descriptor left for its epoll
/// instance (`EMFILE`): a descriptor source then cannot be told from a file that later takes
/// its number, so it must not be watched as if it could. Each case runs in a child process
/// (it lowers the descriptor limit and fills it).
@Suite("Descriptor registry at the descriptor limit", .timeLimit(.minutes(10)))
struct DescriptorRegistryLimitTests {
    /// Lowers the soft descriptor limit to a little above the highest descriptor open, then
    /// opens copies of standard input until none is left. Returns the copies.
    static func exhaustDescriptors() -> [Int32] {
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        let highest = open.compactMap { Int32($0) }.max() ?? 2
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = rlim_t(highest + 32)
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { exit(3) }
        var fillers: [Int32] = []
        while true {
            let fd = dup(0)
            if fd < 0 { break }
            fillers.append(fd)
        }
        guard errno == EMFILE, !fillers.isEmpty else { exit(4) }
        return fillers
    }

    @Test("an eventfd source added when the registry's epoll_create1 fails never fires for the eventfd that takes its number")
    func eventfdAtTheLimit() async {
        // The verdict is the exit status: 10 + the callouts for the new eventfd; 2 if the
        // source was not told why it ended.
        await #expect(processExitsWith: .success) {
            let loop = currentLoopOfThisThread()
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: .default)
            loop.run(mode: .default, for: .milliseconds(1))
            let other = EVRunLoop.Mode("other")
            loop.add(EVTimer(interval: 60, repeats: false) { _ in }, forMode: other)
            var fillers = DescriptorRegistryLimitTests.exhaustDescriptors()
            close(fillers.removeLast())
            let fd = clibev_eventfd_create()  // the last free descriptor
            guard fd >= 0 else { exit(5) }
            let (fires, errors) = (LoopBox(0), LoopBox<[String]>([]))
            let source = try! EVSource(fileDescriptor: fd) { source in
                if let error = source.error { errors.value.append(error.call) } else { fires.value += 1 }
            }
            loop.add(source, forMode: .default)  // the loop's first descriptor source: the registry's epoll
            loop.run(mode: .default, for: .milliseconds(1))
            loop.run(mode: other, for: .milliseconds(1))  // the source's mode is out: unwatched
            // Without invalidating the source, its eventfd is closed and another takes the number.
            close(fillers.removeLast())
            let new = clibev_eventfd_create()
            guard new >= 0, dup2(new, fd) == fd else { exit(6) }
            close(new)
            var one: UInt64 = 1
            _ = write(fd, &one, 8)
            for _ in 0..<3 { loop.run(mode: .default, for: .milliseconds(20)) }
            for filler in fillers { close(filler) }  // the exit test's own reporting needs descriptors
            if fires.value > 0 { exit(10 + Int32(min(fires.value, 200))) }
            exit(errors.value.count == 1 && errors.value[0].contains("epoll_create1") ? 0 : 2)
        }
    }
}
