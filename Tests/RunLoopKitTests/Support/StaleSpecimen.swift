internal import CRunLoopKitLibev
import Foundation
import Glibc
import RunLoopKit

/// The kinds of descriptor a stale-descriptor test closes under a watching source: the
/// pollable ones (the first eight; the anonymous-inode ones share one inode, so `fstat`
/// cannot tell one from another) and a regular file (epoll refuses it: always ready).
enum StaleKind: String, Codable, CaseIterable, Sendable {
    case pipe, socket, eventfd, timerfd, signalfd, inotify, epoll, pidfd, regularFile
}

/// When the watched descriptor is closed and its number taken by a new file of its kind.
enum CloseMoment: String, Codable, CaseIterable, Sendable {
    /// On the loop's thread while the source's mode is not running (the source unwatched).
    case modeOut
    /// On the loop's thread between two runs of the source's mode (the source watched).
    case betweenRuns
    /// By another source's callout, after the wait reported the stale source ready.
    case inPass
    /// By another thread while the loop sleeps watching it.
    case otherThread
    /// Between runs, with the old file kept open under another number (as a forked child
    /// or a `dup` keeps it), and made ready after the number was taken.
    case oldFileStillOpen
}

/// One open file of a ``StaleKind``, the means to make it readable and to drain it, and
/// whatever else it needs (a pipe's write end, a pidfd's child, an inotify's directory).
/// Used on one thread at a time (the other-thread moment hands it over before the loop
/// sees it again).
final class StaleSpecimen: @unchecked Sendable {
    let kind: StaleKind
    /// The number the loop watches.
    private(set) var fd: Int32
    /// Where this file is reached for its own reads and writes: `fd`, or after
    /// ``keepOpen()`` the duplicate that outlives the number.
    private var handle: Int32
    /// The pipe's write end, the socket's peer, the epoll instance's eventfd; -1 if none.
    private var peer: Int32 = -1
    private var child: pid_t = 0
    private let directory: String
    private let loopThread: pthread_t
    private var files = 0

    /// Opens a new file of `kind`; `loopThread` receives a signalfd's signal. Exits 3 on failure.
    init(_ kind: StaleKind, loopThread: pthread_t) {
        self.kind = kind
        self.loopThread = loopThread
        directory = NSTemporaryDirectory() + "stale-\(getpid())-\(UUID().uuidString)"
        var opened: Int32 = -1
        switch kind {
        case .pipe, .socket:
            var fds: [Int32] = [0, 0]
            let made = kind == .pipe ? Glibc.pipe(&fds) : socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
            guard made == 0 else { exit(3) }
            _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
            opened = fds[0]
            peer = fds[1]
        case .eventfd: opened = clibev_eventfd_create()
        case .timerfd: opened = clibev_timerfd_create(0)
        case .signalfd: opened = clibev_signalfd(SIGWINCH)
        case .inotify:
            guard mkdir(directory, 0o700) == 0 else { exit(3) }
            opened = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard opened >= 0, inotify_add_watch(opened, directory, UInt32(IN_CREATE)) >= 0 else { exit(3) }
        case .epoll:
            opened = clibev_epoll_create()
            peer = clibev_eventfd_create()
            guard opened >= 0, clibev_epoll_add(opened, peer, 1) == 0 else { exit(3) }
        case .pidfd:
            child = fork()
            if child == 0 {
                while true { pause() }
            }
            opened = clibev_pidfd_open(child)
        case .regularFile:
            opened = open(NSTemporaryDirectory() + "stale-\(getpid())-\(UUID().uuidString)", O_RDWR | O_CREAT, 0o600)
        }
        guard opened >= 0 else { exit(3) }
        fd = opened
        handle = opened
    }

    /// Makes the file readable (a regular file always is).
    func makeReady() {
        switch kind {
        case .pipe, .socket: _ = write(peer, "x", 1)
        case .eventfd: _ = clibev_eventfd_increment(handle)
        case .timerfd: _ = clibev_timerfd_arm(handle, clibev_monotonic_ns() + 1, 0)
        case .signalfd: _ = pthread_kill(loopThread, SIGWINCH)
        case .inotify:
            files += 1
            let made = open("\(directory)/f\(files)", O_WRONLY | O_CREAT, 0o600)
            if made >= 0 { close(made) }
        case .epoll: _ = clibev_eventfd_increment(peer)
        case .pidfd: _ = kill(child, SIGKILL)
        case .regularFile: break
        }
    }

    /// Reads what made the file readable (a pidfd and a regular file stay readable).
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        switch kind {
        case .pipe, .socket, .signalfd, .inotify: _ = read(handle, &buffer, buffer.count)
        case .eventfd: _ = clibev_eventfd_consume(handle)
        case .timerfd: _ = clibev_timerfd_consume(handle)
        case .epoll: _ = clibev_eventfd_consume(peer)
        case .pidfd, .regularFile: break
        }
    }

    /// Waits (up to 5 s) until the descriptor polls readable: exits 3 if it never does.
    func awaitReady() {
        var entry = pollfd(fd: handle, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 5_000) == 1 else { exit(3) }
    }

    /// Keeps this file open under another number, so that closing `fd` does not end it.
    func keepOpen() { handle = dup(fd) }

    /// Puts this file at `number`, closing the file that had it, in one step (`dup2`).
    func move(to number: Int32) {
        guard dup2(fd, number) == number else { exit(3) }
        close(fd)
        fd = number
        handle = number
    }

    /// Closes what belongs to this file besides its number: a pipe's write end, a socket's
    /// peer, an epoll instance's eventfd (a pidfd's child is killed).
    func closePeer() {
        if peer >= 0 { close(peer) }
        peer = -1
        if child > 0 { _ = kill(child, SIGKILL) }
    }
}
