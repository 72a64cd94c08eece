import Foundation
import Glibc

/// The process's open descriptors: each number in `/proc/self/fd` with what its link names
/// (a path, `pipe:[…]`, `anon_inode:[pidfd]`, `anon_inode:inotify`, …). The directory's own
/// descriptor, open while it is read, is left out.
func openDescriptors() -> [Int32: String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    var links: [Int32: String] = [:]
    for name in names {
        guard let number = Int32(name) else { continue }
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = buffer.withUnsafeMutableBytes { readlink("/proc/self/fd/\(name)", $0.baseAddress!, $0.count) }
        if length > 0 { links[number] = String(decoding: buffer[..<length], as: UTF8.self) }
    }
    return links
}

/// Makes Dispatch open, now, the descriptors it opens once per process on first use: its
/// epoll set, eventfd and a timerfd per clock (uptime, wall, and the monotonic clock that
/// `Task.sleep` on `ContinuousClock` uses) stay open from the first timer on that clock.
/// A test that counts descriptors calls this first, so that a timer the test harness arms
/// meanwhile (an exit test's child has one clock's timerfd open when its body starts) adds none.
func openDispatchTimerDescriptors() {
    let fired = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { fired.signal() }
    DispatchQueue.global().asyncAfter(wallDeadline: .now() + .milliseconds(1)) { fired.signal() }
    Task.detached {
        try? await Task.sleep(for: .milliseconds(1), clock: .continuous)
        fired.signal()
    }
    for _ in 0..<3 { fired.wait() }
}

/// The descriptors open now that `before` did not have, still open after a few looks (the
/// test harness's threads may hold one for a moment), less a lone timerfd or three: Dispatch
/// opens one per clock on its first timer there and keeps it, and the harness can arm one
/// mid-test on a clock ``openDispatchTimerDescriptors()`` did not reach (one
/// `anon_inode:[timerfd]` was left so in ChildSourceTests at bc9740c). RunLoopKit opens
/// timerfds only with a loop's epoll set and eventfd, and a leak per child leaves one per
/// child: neither is a lone timerfd or three.
func descriptorsLeftOpen(since before: [Int32: String]) -> [Int32: String] {
    var left = openDescriptors().filter { before[$0.key] != $0.value }
    for _ in 0..<50 where !left.isEmpty {
        usleep(20_000)
        let now = openDescriptors()
        left = left.filter { now[$0.key] == $0.value }
    }
    let lazyTimers = left.count <= 3 && left.values.allSatisfy { $0 == "anon_inode:[timerfd]" }
    return lazyTimers ? [:] : left
}
