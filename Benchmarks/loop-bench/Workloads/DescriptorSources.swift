import CLibevBench
import Foundation
import NIOCore
import NIOPosix
import RunLoopKit
import Synchronization

/// Workload 8: N idle eventfds (one descriptor apiece, where pipes would take two) plus one
/// active pipe, each watched for reading: ns per add, write → handler latency, and handler
/// calls/s when the handler writes back each byte it reads.
enum DescriptorSources: Workload {
    static let name = "descriptors"
    static let summary = "N idle eventfds + 1 active pipe, read sources on each (EVSource, ev_io, DispatchSourceRead, NIO pipe channels); add cost, write → handler latency (another thread writes, 0.5 ms apart), handler calls/s when the handler writes back each byte it reads."
    static let gap = 0.0005

    static let unavailable: [Peer: String] = [
        .foundation: "swift-corelibs-foundation has no run-loop source for a descriptor (FileHandle's readabilityHandler runs on Dispatch)",
        .taskSleep: "no descriptor API (Swift concurrency reads through Dispatch, NIO or blocking calls)",
        .timerSequence: "a timer sequence watches no descriptor",
    ]

    static func measure(_ plan: Plan) -> [Row] {
        let limit = raiseDescriptorLimit(to: descriptorsNeeded(plan.descriptorCounts.max() ?? 0))
        return plan.descriptorCounts.flatMap { count in
            var pairs = Pairs.Outcome()
            var figures = [[Peer: [Double]]](repeating: [:], count: 4)
            var reasons = unavailable
            if descriptorsNeeded(count) <= limit {
                pairs = Pairs.run(name, plan: plan,
                                  arguments: [String(count), String(plan.descriptorSamples), String(plan.descriptorFeedSeconds)])
                figures = plan.repeated(Pairs.others(plan.peers).filter { unavailable[$0] == nil }, figures: 4) { peer in
                    measureOnce(peer, count: count, samples: plan.descriptorSamples, feedSeconds: plan.descriptorFeedSeconds)
                }
            } else {
                let reason = "not measured: \(descriptorsNeeded(count).grouped) descriptors needed, the hard RLIMIT_NOFILE here is \(limit.grouped)"
                for peer in Peer.allCases where reasons[peer] == nil { reasons[peer] = reason }
            }
            let n = "\(count.grouped) idle + 1"
            func row(_ index: Int, _ metric: String, _ unit: String, better: Row.Better = .lower) -> Row {
                Row.make(name, "\(metric), N = \(n)", unit: unit, better: better, values: figures[index], unavailable: reasons)
                    .paired(pairs, figure: index)
            }
            // Issue 13's goals are for the crowded loop: adding stays O(1) among 8,000 idle
            // sources; issue 37 holds it there to 50,000.
            let add = row(0, "add a read source, per source", "ns")
            let calls = row(3, "handler calls/s, the handler feeding itself", "calls/s", better: .higher)
            return [
                count >= 8_000 ? add.withGoal("≤ 2 µs") { $0.median <= 2_000 } : add,
                row(1, "write → handler latency median", "µs"),
                row(2, "write → handler latency p99", "µs"),
                count >= 8_000 ? calls.withRatioGoal("≥ 2/3 libev", to: .libev, bound: 2.0 / 3) : calls,
            ]
        }
    }

    /// The descriptors a run of `count` idle ones needs: theirs, the active pipe's, and room
    /// for the process's own (the loop's, the peers' threads', standard streams).
    static func descriptorsNeeded(_ count: Int) -> Int { count + 1_000 }

    /// One run on fresh descriptors: ns per add, the latency median and p99 (µs), calls/s.
    static func measureOnce(_ peer: Peer, count: Int, samples: Int, feedSeconds: Double) -> [Double] {
        Quiet.wait()
        let pipes = Pipes(count: count + 1)
        let active = Active(samples: samples, writeEnd: pipes.activeWrite)
        let (add, latencies, feeds, wall) = switch peer {
        case .runLoopKit: onFreshThread { runLoopKit(pipes, active, feedSeconds: feedSeconds) }
        case .libev: onFreshThread { libev(pipes, samples: samples, feedSeconds: feedSeconds) }
        case .dispatch: dispatch(pipes, active, feedSeconds: feedSeconds)
        case .nio: nio(pipes, active, feedSeconds: feedSeconds)
        default: fatalError("loop-bench descriptors: \(peer.rawValue) watches no descriptor")
        }
        pipes.close(readEnds: peer != .nio)
        return [Double(add) / Double(pipes.readEnds.count)] + Summary(latencies.map(Double.init)).microseconds
            + [Double(feeds) / (Double(wall) / 1e9)]
    }

    /// A child of the pairs: `[peer key, idle count, samples, feed seconds]`, after a short
    /// untimed run (the first adds of a fresh process fault its heap in).
    static func child(_ arguments: [String]) {
        let (peer, a) = Pairs.arguments(arguments, of: name, numbers: 3)
        let count = Int(a[0])
        raiseDescriptorLimit(to: descriptorsNeeded(count))
        _ = measureOnce(peer, count: count, samples: 10, feedSeconds: 0.05)
        Pairs.report(measureOnce(peer, count: count, samples: Int(a[1]), feedSeconds: a[2]))
    }

    /// The handler of the active pipe, shared by every peer: in the latency phase it notes
    /// the latency of the byte it read; in the feeding phase it counts and writes one back.
    final class Active: Sendable {
        let probe: WakeProbe
        let writeEnd: Int32
        let feeding = Atomic<Bool>(false)
        let feeds = Atomic<Int>(0)

        init(samples: Int, writeEnd: Int32) {
            probe = WakeProbe(samples: samples, gap: DescriptorSources.gap)
            self.writeEnd = writeEnd
        }

        /// Called after the handler read its byte; returns true when the latency phase is over.
        func handled() -> Bool {
            if feeding.load(ordering: .relaxed) {
                feeds.add(1, ordering: .relaxed)
                writeByte(writeEnd)
                return false
            }
            return probe.handle()
        }

        /// Starts the thread that writes the latency samples.
        func startSender() { probe.startSender { [writeEnd] in writeByte(writeEnd) } }

        /// Switches to feeding and writes the first byte; returns the feeds so far.
        func startFeeding() -> Int {
            feeding.store(true, ordering: .relaxed)
            let before = feeds.load(ordering: .relaxed)
            writeByte(writeEnd)
            return before
        }
    }

    /// What one peer's run measured: ns to add every source, the latencies (ns), and the
    /// handler calls in the feeding window of `wall` ns.
    typealias Outcome = (add: Int64, latencies: [Int64], feeds: Int, wall: Int64)

    private static func runLoopKit(_ pipes: Pipes, _ active: Active, feedSeconds: Double) -> Outcome {
        let loop = EVRunLoop.current
        let t0 = Clock.monotonic()
        let sources = pipes.readEnds.enumerated().map { index, fd in
            let source = try! EVSource(fileDescriptor: fd) { _ in
                guard index == pipes.readEnds.count - 1, readByte(fd) else { return }
                if active.handled() { loop.stop() }
            }
            loop.add(source, forMode: .default)
            return source
        }
        let outcome = latencyAndFeed(active, add: Clock.monotonic() - t0, wait: { loop.run() },
                                     feed: { loop.run(mode: .default, for: .seconds(feedSeconds)) })
        for source in sources { source.invalidate() }
        return outcome
    }

    private static func libev(_ pipes: Pipes, samples: Int, feedSeconds: Double) -> Outcome {
        var (add, feeds, wall) = (Int64(0), Int64(0), Int64(0))
        var latencies = [Int64](repeating: 0, count: samples)
        let status = pipes.readEnds.withUnsafeBufferPointer { fds in
            latencies.withUnsafeMutableBufferPointer { buffer in
                lb_descriptors(Int32(fds.count - 1), fds.baseAddress, pipes.activeWrite, Int32(samples), gap,
                               feedSeconds, &add, buffer.baseAddress, &feeds, &wall)
            }
        }
        precondition(status == 0, "lb_descriptors failed")
        return (add, latencies, Int(feeds), wall)
    }

    private static func dispatch(_ pipes: Pipes, _ active: Active, feedSeconds: Double) -> Outcome {
        let queue = DispatchQueue(label: "loop-bench.descriptors")
        let done = DispatchSemaphore(value: 0)
        let t0 = Clock.monotonic()
        let sources = pipes.readEnds.enumerated().map { index, fd in
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            if index == pipes.readEnds.count - 1 {
                source.setEventHandler {
                    guard readByte(fd) else { return }
                    if active.handled() { done.signal() }
                }
            } else {
                source.setEventHandler {}
            }
            source.activate()
            return source
        }
        let outcome = latencyAndFeed(active, add: Clock.monotonic() - t0, wait: { done.wait() }, feed: { sleepThread(feedSeconds) })
        let cancelled = DispatchGroup()
        for source in sources {
            cancelled.enter()
            source.setCancelHandler { cancelled.leave() }
            source.cancel()
        }
        cancelled.wait()
        return outcome
    }

    private static func nio(_ pipes: Pipes, _ active: Active, feedSeconds: Double) -> Outcome {
        let done = DispatchSemaphore(value: 0)
        let activeFD = pipes.readEnds.last!
        let t0 = Clock.monotonic()
        let futures = pipes.readEnds.map { fd in
            NIOPipeBootstrap(group: NIOLoop.group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if fd == activeFD {
                            try channel.pipeline.syncOperations.addHandler(ActiveHandler(active: active, done: done))
                        }
                    }
                }
                .takingOwnershipOfDescriptor(input: fd)
        }
        let channels = futures.map { try! $0.wait() }
        let outcome = latencyAndFeed(active, add: Clock.monotonic() - t0, wait: { done.wait() }, feed: { sleepThread(feedSeconds) })
        for channel in channels { try? channel.close().wait() }
        return outcome
    }

    /// The latency and feeding phases of every peer but libev: `wait` returns after the last
    /// sample was handled, `feed` lasts the feeding window (it runs the loop, or sleeps while
    /// the peer's own threads feed).
    private static func latencyAndFeed(_ active: Active, add: Int64, wait: () -> Void, feed: () -> Void) -> Outcome {
        active.startSender()
        wait()
        active.probe.joinSender()
        let before = active.startFeeding()
        let window = ProcessWindow()
        feed()
        let wall = window.end().wallNanos
        let feeds = active.feeds.load(ordering: .relaxed) - before
        active.feeding.store(false, ordering: .relaxed)
        sleepThread(0.01)
        return (add, active.probe.latencies, feeds, wall)
    }

    /// NIO's handler of the active pipe.
    /// Made and used on the event loop's thread (`syncOperations`), so not `Sendable`.
    final class ActiveHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let active: Active
        let done: DispatchSemaphore

        init(active: Active, done: DispatchSemaphore) {
            self.active = active
            self.done = done
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if active.handled() { done.signal() }
        }
    }

    /// The descriptors of one run, non-blocking: `count - 1` idle eventfds, then the active
    /// pipe's read end (`readEnds`), and its write end (`activeWrite`).
    final class Pipes: Sendable {
        let readEnds: [Int32]
        let activeWrite: Int32

        init(count: Int) {
            let idle = (0..<(count - 1)).map { made in
                let fd = lb_idle_eventfd()
                guard fd >= 0 else { fatalError("loop-bench descriptors: eventfd failed after \(made), errno \(errno)") }
                return fd
            }
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else {
                fatalError("loop-bench descriptors: pipe failed after \(idle.count) eventfds, errno \(errno)")
            }
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            readEnds = idle + [fds[0]]
            activeWrite = fds[1]
        }

        /// Closes the write end, and the read ends unless their peer owns them (NIO).
        func close(readEnds closeReads: Bool) {
            Glibc.close(activeWrite)
            if closeReads { for fd in readEnds { Glibc.close(fd) } }
        }
    }

    /// Raises `RLIMIT_NOFILE` toward `wanted` (the hard limit too where allowed); returns the
    /// soft limit now.
    @discardableResult
    static func raiseDescriptorLimit(to wanted: Int) -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        getrlimit(resource, &limit)
        var raised = rlimit(rlim_cur: rlim_t(wanted), rlim_max: Swift.max(limit.rlim_max, rlim_t(wanted)))
        if limit.rlim_cur < rlim_t(wanted), setrlimit(resource, &raised) != 0 {
            limit.rlim_cur = Swift.min(rlim_t(wanted), limit.rlim_max)
            setrlimit(resource, &limit)
        }
        getrlimit(resource, &limit)
        return Int(clamping: limit.rlim_cur)
    }
}

/// Reads one byte from a non-blocking descriptor; false when there was none.
func readByte(_ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    return read(fd, &byte, 1) == 1
}

/// Writes one byte to a descriptor.
func writeByte(_ fd: Int32) {
    var byte: UInt8 = 1
    _ = write(fd, &byte, 1)
}
