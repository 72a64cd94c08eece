import Glibc
import Synchronization
import RunLoopKitPlatform

/// The stall reports of one loop (``EVRunLoop/reportStalls(over:_:)``): the callout running
/// now, published without a lock for a watchdog thread that reports a callout still running
/// past the threshold; the loop's thread reports it again when it returns.
///
/// The running callout is published as a sequence lock made of atomics: before a callout the
/// loop's thread stores its kind, start, number and label, then makes `sequence` odd; after
/// it, even, or, when it was nested in another callout (a nested run's), the outer callout is
/// published again, so that one blocked after its nested run returned is still reported.
/// The watchdog reads the sequence, the fields, the sequence again, and trusts the fields
/// only when both reads agree and are odd: every access is atomic, so a read that races a
/// write is discarded, never torn. No wake of the loop on either side, and no lock but the
/// loop thread's own, uncontended, for a nested callout.
final class StallWatch: Sendable {
    /// The threshold (ns).
    let threshold: Int64
    private let handler: @Sendable (EVRunLoop.Stall) -> Void
    private let sequence = Atomic<UInt64>(0)
    private let kind = Atomic<UInt8>(0)
    private let start = Atomic<Int64>(0)
    private let labelLength = Atomic<Int>(0)
    /// The label's first 32 UTF-8 bytes, eight to a word (the watchdog's copy; the report
    /// made when the callout returns has all of it).
    private let word0 = Atomic<UInt64>(0), word1 = Atomic<UInt64>(0)
    private let word2 = Atomic<UInt64>(0), word3 = Atomic<UInt64>(0)
    /// The published callout's number (``begun`` when it began).
    private let number = Atomic<UInt64>(0)
    /// The last callout (its number) the watchdog reported while it ran.
    private let reportedRunning = Atomic<UInt64>(0)
    /// Loop thread only: how many callouts began, which numbers them.
    private let begun = Atomic<UInt64>(0)
    /// Loop thread only: the callouts that nested callouts interrupted, outermost first, and
    /// how many (read first, so that a callout nested in none takes no lock). The lock is
    /// never contended: the watchdog never takes it.
    private let interrupted = Mutex<[Callout]>([])
    private let nesting = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let watchdog = Mutex<JoinableThread?>(nil)

    private init(threshold: Int64, handler: @escaping @Sendable (EVRunLoop.Stall) -> Void) {
        self.threshold = threshold
        self.handler = handler
    }

    /// A watch whose watchdog thread runs until ``stop()``.
    static func start(threshold: Int64, handler: @escaping @Sendable (EVRunLoop.Stall) -> Void) -> StallWatch {
        let watch = StallWatch(threshold: threshold, handler: handler)
        let thread = JoinableThread(name: "RunLoopKit stalls") { watch.watch() }
        watch.watchdog.withLock { $0 = thread }
        return watch
    }

    /// Ends the watchdog thread and waits for it. Once.
    func stop() {
        stopping.store(true, ordering: .releasing)
        watchdog.withLock { $0.take() }?.join()
    }

    /// A callout of `kind` labelled `label` begins; returns its start (monotonic ns). A
    /// callout already published (this one is nested in it) is kept, to be published again
    /// when this one ends.
    func begin(_ kind: EVRunLoop.CalloutKind, label: String) -> Int64 {
        let now = Self.monotonicNow()
        // The label's first 32 bytes, copied straight into the words: no array made per callout.
        var callout = Callout(kind: kind.rawValue, start: now, number: begun.load(ordering: .relaxed) &+ 1)
        withUnsafeMutableBytes(of: &callout.words) { raw in
            for byte in label.utf8 {
                guard callout.length < raw.count else { break }
                raw[callout.length] = byte
                callout.length += 1
            }
        }
        begun.store(callout.number, ordering: .relaxed)
        if sequence.load(ordering: .relaxed) & 1 == 1 {
            let outer = published()
            interrupted.withLock { $0.append(outer) }
            nesting.store(nesting.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        }
        publish(callout)
        return now
    }

    /// The callout begun at `started` returned: reported if it ran past the threshold. The
    /// callout it was nested in, if any, is watched again (its start, its label, and whether
    /// the watchdog reported it already, kept).
    func end(_ kind: EVRunLoop.CalloutKind, label: String, started: Int64) {
        if nesting.load(ordering: .relaxed) > 0, let outer = interrupted.withLock({ $0.popLast() }) {
            nesting.store(nesting.load(ordering: .relaxed) &- 1, ordering: .relaxed)
            publish(outer)
        } else {
            let current = sequence.load(ordering: .relaxed)
            if current & 1 == 1 { sequence.store(current &+ 1, ordering: .releasing) }  // even: none watched
        }
        let duration = Self.monotonicNow() - started
        guard duration > threshold else { return }
        handler(EVRunLoop.Stall(kind: kind, label: label, duration: .nanoseconds(duration), isFinished: true))
    }

    /// Publishes `callout` as the one running: the sequence even while the fields change (a
    /// nested callout makes its outer one's odd sequence even first), then odd. The fence
    /// orders that, and the last `end`, before the stores.
    private func publish(_ callout: Callout) {
        let current = sequence.load(ordering: .relaxed)
        if current & 1 == 1 { sequence.store(current &+ 1, ordering: .relaxed) }
        atomicMemoryFence(ordering: .releasing)
        kind.store(callout.kind, ordering: .relaxed)
        start.store(callout.start, ordering: .relaxed)
        number.store(callout.number, ordering: .relaxed)
        labelLength.store(callout.length, ordering: .relaxed)
        word0.store(callout.words.0, ordering: .relaxed)
        word1.store(callout.words.1, ordering: .relaxed)
        word2.store(callout.words.2, ordering: .relaxed)
        word3.store(callout.words.3, ordering: .relaxed)
        sequence.store((current | 1) &+ 2, ordering: .releasing)  // odd: running
    }

    /// The callout published now, read back on the loop's thread (the one writer).
    private func published() -> Callout {
        var callout = Callout(kind: kind.load(ordering: .relaxed), start: start.load(ordering: .relaxed),
                              number: number.load(ordering: .relaxed))
        callout.length = labelLength.load(ordering: .relaxed)
        callout.words = (word0.load(ordering: .relaxed), word1.load(ordering: .relaxed),
                         word2.load(ordering: .relaxed), word3.load(ordering: .relaxed))
        return callout
    }

    /// The watchdog: every quarter of the threshold (at most 50 ms, at least 1 ms), the
    /// callout running, if it has run past the threshold and was not reported yet.
    private func watch() {
        let quantum = UInt32(min(max(threshold / 4, 1_000_000), 50_000_000) / 1_000)
        while !stopping.load(ordering: .acquiring) {
            ThreadPause.sleep(microseconds: quantum)
            let before = sequence.load(ordering: .acquiring)
            guard before & 1 == 1 else { continue }
            let callout = number.load(ordering: .relaxed)
            let kind = kind.load(ordering: .relaxed)
            let started = start.load(ordering: .relaxed)
            let length = labelLength.load(ordering: .relaxed)
            var words = (word0.load(ordering: .relaxed), word1.load(ordering: .relaxed),
                         word2.load(ordering: .relaxed), word3.load(ordering: .relaxed))
            atomicMemoryFence(ordering: .acquiring)
            guard sequence.load(ordering: .relaxed) == before, reportedRunning.load(ordering: .relaxed) != callout else {
                continue
            }
            let running = Self.monotonicNow() - started
            guard running > threshold, let kind = EVRunLoop.CalloutKind(rawValue: kind) else { continue }
            let label = withUnsafeBytes(of: &words) { raw in
                String(decoding: raw.prefix(min(max(length, 0), 32)), as: UTF8.self)
            }
            reportedRunning.store(callout, ordering: .relaxed)
            handler(EVRunLoop.Stall(kind: kind, label: label, duration: .nanoseconds(running), isFinished: false))
        }
    }

    private static func monotonicNow() -> Int64 {
        SystemClock.monotonicNanoseconds()
    }
}

extension StallWatch {
    /// One callout as the watchdog reads it: kind, start (monotonic ns), number, and the
    /// label's first 32 UTF-8 bytes.
    struct Callout {
        var kind: UInt8
        var start: Int64
        var number: UInt64
        var length = 0
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }
}

extension EVRunLoop.Trace.Event {
    /// A callout event's label: its object's, or the kind's name.
    var calloutLabel: String {
        switch self {
        case .timer(let label), .source(let label), .block(let label), .observer(let label, _): label
        case .job: "job"
        case .mainQueue: "mainQueue"
        case .activity(let activity): "\(activity)"
        case .returned(let result): "\(result)"
        }
    }
}
