import CRunLoopKitGLib
import Foundation
import Glibc

/// The descriptor matrix: GLib's conditions (`G_IO_IN`, `OUT`, `PRI`, `ERR`, `HUP` and
/// combinations) on each kind of descriptor (pipe, socket pair, eventfd, timerfd, a regular
/// file, a `/proc` file), each raised (or not) by a GLib timeout.
extension GLibScenario {
    /// A watch of `condition` on a descriptor `make` opens; the first of `triggers` runs at
    /// 20 ms, each next one 20 ms after a dispatch of the watch (so the order does not hang
    /// on timing); `consume` empties the descriptor in the watch's callback (nil: the watch is
    /// removed at its first dispatch).
    static func descriptor(
        _ name: String, _ condition: GIOCondition,
        make: @escaping @Sendable () -> DescriptorPair,
        triggers: [@Sendable (DescriptorPair) -> Void] = [],
        consume: (@Sendable (Int32) -> Void)? = nil
    ) -> GLibScenario {
        GLibScenario(name: "\(name) \(conditionText(condition))") { run in
            let pair = make()
            run.atEnd { pair.close() }
            var next = 0
            func armNextTrigger(after milliseconds: UInt32) {
                guard next < triggers.count else { return }
                let index = next
                next += 1
                run.timeout(milliseconds) {
                    run.log("trigger \(index + 1)")
                    triggers[index](pair)
                    return false
                }
            }
            run.watch(pair.watched, condition) { reported in
                run.log("watch \(conditionText(GIOCondition(reported.rawValue & (condition.rawValue | G_IO_ERR.rawValue | G_IO_HUP.rawValue | G_IO_NVAL.rawValue))))")
                guard let consume, reported.rawValue & (G_IO_ERR.rawValue | G_IO_HUP.rawValue | G_IO_NVAL.rawValue) == 0 else {
                    return false
                }
                consume(pair.watched)
                armNextTrigger(after: 20)
                return true
            }
            armNextTrigger(after: 20)
        }
    }

    static let descriptorScenarios: [GLibScenario] = {
        var all: [GLibScenario] = []
        // Pipes: the read end for IN, HUP, PRI; the write end for OUT and ERR.
        all.append(descriptor("pipe read end", G_IO_IN, make: DescriptorPair.pipe,
                              triggers: [writeByte, writeByte], consume: readSome))
        all.append(descriptor("pipe read end", G_IO_HUP, make: DescriptorPair.pipe, triggers: [closePeer]))
        all.append(descriptor("pipe read end", GIOCondition(G_IO_IN.rawValue | G_IO_HUP.rawValue), make: DescriptorPair.pipe,
                              triggers: [writeByte, closePeer], consume: readSome))
        all.append(descriptor("pipe read end", G_IO_PRI, make: DescriptorPair.pipe, triggers: [writeByte]))
        all.append(descriptor("pipe write end", G_IO_OUT, make: DescriptorPair.pipeWriteEnd))
        all.append(descriptor("pipe write end", G_IO_ERR, make: DescriptorPair.pipeWriteEnd, triggers: [closePeer]))
        all.append(descriptor("pipe write end", GIOCondition(G_IO_ERR.rawValue | G_IO_HUP.rawValue),
                              make: DescriptorPair.pipeWriteEnd, triggers: [closePeer]))
        // Socket pairs.
        all.append(descriptor("socket", G_IO_IN, make: DescriptorPair.socketPair,
                              triggers: [writeByte, writeByte], consume: readSome))
        all.append(descriptor("socket", G_IO_OUT, make: DescriptorPair.socketPair))
        all.append(descriptor("socket", GIOCondition(G_IO_IN.rawValue | G_IO_OUT.rawValue), make: DescriptorPair.socketPair))
        all.append(descriptor("socket", G_IO_HUP, make: DescriptorPair.socketPair, triggers: [closePeer]))
        all.append(descriptor("socket", G_IO_PRI, make: DescriptorPair.socketPair, triggers: [writeByte]))
        // eventfd.
        all.append(descriptor("eventfd", G_IO_IN, make: DescriptorPair.eventFD,
                              triggers: [addOne, addOne], consume: readSome))
        all.append(descriptor("eventfd", G_IO_OUT, make: DescriptorPair.eventFD))
        all.append(descriptor("eventfd", G_IO_PRI, make: DescriptorPair.eventFD, triggers: [addOne]))
        // timerfd.
        all.append(descriptor("timerfd", G_IO_IN, make: DescriptorPair.timerFD,
                              triggers: [armIn10ms, armIn10ms], consume: readSome))
        all.append(descriptor("timerfd", G_IO_PRI, make: DescriptorPair.timerFD, triggers: [armIn10ms]))
        // A regular file: poll(2) reports reading and writing at once, nothing else ever.
        all.append(descriptor("regular file", G_IO_IN, make: DescriptorPair.regularFile))
        all.append(descriptor("regular file", G_IO_OUT, make: DescriptorPair.regularFile))
        all.append(descriptor("regular file", G_IO_PRI, make: DescriptorPair.regularFile))
        // /proc/self/mountinfo: always readable; PRI and ERR only when the mounts change.
        all.append(descriptor("/proc/self/mountinfo", G_IO_IN, make: DescriptorPair.mountInfo))
        all.append(descriptor("/proc/self/mountinfo", G_IO_PRI, make: DescriptorPair.mountInfo))
        all.append(descriptor("/proc/self/mountinfo", G_IO_ERR, make: DescriptorPair.mountInfo))
        all.append(descriptor("/proc/self/mountinfo", GIOCondition(G_IO_IN.rawValue | G_IO_PRI.rawValue),
                              make: DescriptorPair.mountInfo))
        return all
    }()

    static let writeByte: @Sendable (DescriptorPair) -> Void = { pair in
        var byte: UInt8 = 1
        _ = write(pair.peer, &byte, 1)
    }
    static let addOne: @Sendable (DescriptorPair) -> Void = { pair in
        var one: UInt64 = 1
        _ = write(pair.peer, &one, 8)
    }
    static let armIn10ms: @Sendable (DescriptorPair) -> Void = { pair in
        var value = itimerspec()
        value.it_value.tv_nsec = 10_000_000
        _ = timerfd_settime(pair.peer, 0, &value, nil)
    }
    static let closePeer: @Sendable (DescriptorPair) -> Void = { pair in pair.closePeer() }
    static let readSome: @Sendable (Int32) -> Void = { fd in
        var buffer = [UInt8](repeating: 0, count: 64)
        _ = read(fd, &buffer, 64)
    }
}

/// A watched descriptor and the one that raises its conditions (the same one for eventfds
/// and timerfds; none, -1, for files).
final class DescriptorPair: @unchecked Sendable {
    // Unchecked: touched by one run's thread only (made, triggered and closed there).
    let watched: Int32
    private(set) var peer: Int32

    init(watched: Int32, peer: Int32) {
        self.watched = watched
        self.peer = peer
    }

    func closePeer() {
        if peer >= 0 && peer != watched { Glibc.close(peer) }
        peer = -1
    }

    func close() {
        closePeer()
        Glibc.close(watched)
    }

    @Sendable static func pipe() -> DescriptorPair {
        let (readEnd, writeEnd) = makePipe()
        return DescriptorPair(watched: readEnd, peer: writeEnd)
    }

    @Sendable static func pipeWriteEnd() -> DescriptorPair {
        let (readEnd, writeEnd) = makePipe()
        return DescriptorPair(watched: writeEnd, peer: readEnd)
    }

    @Sendable static func socketPair() -> DescriptorPair {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            fatalError("socketpair: \(errno)")
        }
        return DescriptorPair(watched: fds[0], peer: fds[1])
    }

    @Sendable static func eventFD() -> DescriptorPair {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        return DescriptorPair(watched: fd, peer: fd)
    }

    @Sendable static func timerFD() -> DescriptorPair {
        let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        return DescriptorPair(watched: fd, peer: fd)
    }

    @Sendable static func regularFile() -> DescriptorPair {
        DescriptorPair(watched: open("/proc/self/exe", O_RDONLY | O_CLOEXEC), peer: -1)
    }

    @Sendable static func mountInfo() -> DescriptorPair {
        DescriptorPair(watched: open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), peer: -1)
    }
}
