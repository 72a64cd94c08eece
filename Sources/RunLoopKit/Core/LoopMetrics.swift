import Glibc
import Synchronization
import RunLoopKitPlatform

/// The health metrics of one loop (``EVRunLoop/recordsMetrics``): busy and asleep time,
/// passes, wakes by reason, callout durations by kind and timer lateness as histograms, the
/// longest callout.
///
/// One writer, the loop's thread, and readers on any thread (``snapshot()``). Every figure is
/// an atomic that the loop's thread updates with a relaxed load and store (no
/// read-modify-write, no lock, no fence: plain moves on x86-64 and arm64), so a reader never
/// sees a torn figure; figures read together may be a few callouts apart while the loop runs
/// (on its own thread a snapshot is exact). The longest callout's label sits under a lock,
/// taken only when a callout runs longer than every one before it.
///
/// A reset is a sequence lock's write (`generation` odd while the figures go back to zero,
/// then even, one more reset counted), and a snapshot its read: taken again when a reset ran
/// meanwhile. So a snapshot never mixes figures from before a reset with figures after it,
/// and figures read under one reset count never go backwards. (Except in a forked child whose
/// parent's loop thread was in a reset at the fork: that reset never ends, and the child's
/// snapshots of the loop, which it cannot run, read the figures as the reset left them.)
final class LoopMetrics: Sendable {
    typealias Histogram = EVRunLoop.Metrics.Histogram

    let passes = Atomic<Int>(0)
    /// How many times the figures were reset (``reset()``).
    let resets = Atomic<Int>(0)
    /// The resets' sequence lock: odd while a reset runs.
    private let generation = Atomic<UInt64>(0)
    /// The process's fork count (``ProcessForks/generation``) when the latest reset began:
    /// another count now means that the reset ran in the parent of this forked child, on a
    /// thread the child does not have, and never ends here.
    private let resetForks = Atomic<UInt32>(ProcessForks.generation)
    let busyNanos = Atomic<Int64>(0)
    let asleepNanos = Atomic<Int64>(0)
    /// Wakes by reason, indexed by ``wakeIndex(_:)``.
    let wakes: InlineArray<5, Atomic<Int>> = InlineArray { _ in Atomic(0) }
    /// Callouts by kind, indexed by `CalloutKind.rawValue - 1`: total and longest (ns; -1 for
    /// none, so that a callout of 0 ns is longer: the snapshot shows 0), and the histogram's
    /// slots (``slots`` per kind, kind-major; their sum is the count). ``longestNanos`` is
    /// never below a kind's longest, so only a callout longer than its kind's longest is
    /// compared with it.
    let calloutTotals: InlineArray<6, Atomic<Int64>> = InlineArray { _ in Atomic(0) }
    let calloutMaxima: InlineArray<6, Atomic<Int64>> = InlineArray { _ in Atomic(-1) }
    let calloutBuckets: InlineArray<1536, Atomic<Int>> = InlineArray { _ in Atomic(0) }  // 6 × slots
    /// Timer lateness: total and largest (ns), slots (their sum is the count).
    let latenessTotal = Atomic<Int64>(0)
    let latenessMax = Atomic<Int64>(0)
    let latenessBuckets: InlineArray<256, Atomic<Int>> = InlineArray { _ in Atomic(0) }

    /// Slots per histogram: one for every bucket before the last one's clamp (0...251,
    /// ``Histogram/unclampedBucket(ofNanoseconds:)``), so that recording a value clamps
    /// nothing (the mask only shows the compiler the index is in bounds); a snapshot folds
    /// the slots from the last bucket on into it (``buckets(_:)``).
    static let slots = 256

    /// The slot of a value of `nanos` nanoseconds.
    @inline(__always)
    static func slot(ofNanoseconds nanos: Int64) -> Int {
        Int(truncatingIfNeeded: Histogram.unclampedBucket(ofNanoseconds: nanos) & 255)
    }

    /// A histogram's ``Histogram/bucketCount`` buckets from its slots (`slot(i)` reads slot
    /// i): those from the last bucket on count in it.
    private static func buckets(_ slot: (Int) -> Int) -> [Int] {
        var buckets = (0..<Histogram.bucketCount).map(slot)
        for index in Histogram.bucketCount..<slots { buckets[Histogram.bucketCount - 1] += slot(index) }
        return buckets
    }
    /// The longest callout's duration (ns; -1 for none), and the callout itself. Its lock is
    /// taken by the loop's thread and by any thread that reads ``snapshot()``: a forked child
    /// whose copy such a thread of the parent held at the fork refuses to take it, where a
    /// plain `Mutex` would wait for good (``ForkCheckedLock``).
    let longestNanos = Atomic<Int64>(-1)
    let longest = ForkCheckedLock<EVRunLoop.Metrics.Callout?>(nil, name: "the loop's metrics' longest callout")

    init() {}

    /// One callout of `kind` ran `nanos`; returns whether it ran longer than every one
    /// before it, whose label the caller then gives ``recordLongest(_:nanos:label:)``.
    @inline(__always)
    func recordCallout(_ kind: EVRunLoop.CalloutKind, nanos: Int64) -> Bool {
        let nanos = max(nanos, 0)
        let index = Int(kind.rawValue) &- 1
        calloutTotals[index].bump(by: nanos)
        calloutBuckets[index &* Self.slots &+ Self.slot(ofNanoseconds: nanos)].bump(by: 1)
        guard nanos > calloutMaxima[index].load(ordering: .relaxed) else { return false }
        calloutMaxima[index].store(nanos, ordering: .relaxed)
        return nanos > longestNanos.load(ordering: .relaxed)
    }

    /// The longest callout yet: `kind`, `nanos`, `label`.
    @inline(never)
    func recordLongest(_ kind: EVRunLoop.CalloutKind, nanos: Int64, label: String) {
        longest.withLock { $0 = EVRunLoop.Metrics.Callout(kind: kind, label: label, duration: .nanoseconds(nanos)) }
        longestNanos.store(nanos, ordering: .relaxed)
    }

    /// A timer fired `nanos` after its fire date.
    @inline(__always)
    func recordLateness(nanos: Int64) {
        let nanos = max(nanos, 0)
        latenessTotal.bump(by: nanos)
        if nanos > latenessMax.load(ordering: .relaxed) { latenessMax.store(nanos, ordering: .relaxed) }
        latenessBuckets[Self.slot(ofNanoseconds: nanos)].bump(by: 1)
    }

    /// The loop slept `nanos` and woke for `reason`.
    func recordWake(_ reason: EVRunLoop.Trace.WakeReason, asleep nanos: Int64) {
        wakes[Self.wakeIndex(reason)].bump(by: 1)
        asleepNanos.bump(by: max(nanos, 0))
    }

    /// The loop was awake (busy) for `nanos`.
    func recordBusy(nanos: Int64) { busyNanos.bump(by: max(nanos, 0)) }

    static let wakeReasons: [EVRunLoop.Trace.WakeReason] = [.deadline, .descriptor, .signal, .mainQueue, .wakeUp]

    static func wakeIndex(_ reason: EVRunLoop.Trace.WakeReason) -> Int {
        switch reason {
        case .deadline: 0
        case .descriptor: 1
        case .signal: 2
        case .mainQueue: 3
        case .wakeUp: 4
        }
    }

    static let kinds: [EVRunLoop.CalloutKind] = [.timer, .source, .observer, .block, .job, .mainQueue]

    /// Every figure now, none from before a reset that ran while they were read. Any thread.
    func snapshot() -> EVRunLoop.Metrics {
        while true {
            let before = generation.load(ordering: .acquiring)
            guard before & 1 == 0 else {
                // A reset in the parent of this forked child, whose loop thread the child
                // does not have, never ends: the figures are as it left them.
                if resetForks.load(ordering: .relaxed) != ProcessForks.generation { return figures(forked: true) }
                ThreadPause.yield()  // a reset runs on the loop's thread
                continue
            }
            let metrics = figures()
            atomicMemoryFence(ordering: .acquiring)
            if generation.load(ordering: .relaxed) == before { return metrics }
        }
    }

    /// Every figure, read one by one; `forked`: in a forked child whose parent's loop thread
    /// was in a reset, which may have held the longest callout's lock (then left out).
    private func figures(forked: Bool = false) -> EVRunLoop.Metrics {
        var metrics = EVRunLoop.Metrics()
        metrics.resets = resets.load(ordering: .relaxed)
        metrics.passes = passes.load(ordering: .relaxed)
        metrics.busy = .nanoseconds(busyNanos.load(ordering: .relaxed))
        metrics.asleep = .nanoseconds(asleepNanos.load(ordering: .relaxed))
        for reason in Self.wakeReasons {
            let count = wakes[Self.wakeIndex(reason)].load(ordering: .relaxed)
            if count > 0 { metrics.wakes[reason] = count }
        }
        for kind in Self.kinds {
            let index = Int(kind.rawValue) - 1
            let base = index * Self.slots
            let buckets = Self.buckets { calloutBuckets[base + $0].load(ordering: .relaxed) }
            let count = buckets.reduce(0, +)
            guard count > 0 else { continue }
            metrics.callouts[kind] = Histogram(
                count: count, totalNanoseconds: calloutTotals[index].load(ordering: .relaxed),
                maxNanoseconds: max(calloutMaxima[index].load(ordering: .relaxed), 0), buckets: buckets)
        }
        let lateness = Self.buckets { latenessBuckets[$0].load(ordering: .relaxed) }
        metrics.lateness = Histogram(
            count: lateness.reduce(0, +), totalNanoseconds: latenessTotal.load(ordering: .relaxed),
            maxNanoseconds: latenessMax.load(ordering: .relaxed), buckets: lateness)
        metrics.longestCallout = forked ? longest.withLockIfAvailable { $0 } ?? nil : longest.withLock { $0 }
        return metrics
    }

    /// Every figure back to zero. Loop thread only (the one writer).
    func reset() {
        let before = generation.load(ordering: .relaxed)
        resetForks.store(ProcessForks.generation, ordering: .relaxed)
        generation.store(before &+ 1, ordering: .releasing)  // after `resetForks`, for a reader that sees it odd
        atomicMemoryFence(ordering: .releasing)
        passes.store(0, ordering: .relaxed)
        busyNanos.store(0, ordering: .relaxed)
        asleepNanos.store(0, ordering: .relaxed)
        for index in 0..<5 { wakes[index].store(0, ordering: .relaxed) }
        for index in 0..<6 {
            calloutTotals[index].store(0, ordering: .relaxed)
            calloutMaxima[index].store(-1, ordering: .relaxed)
        }
        for index in 0..<(6 * Self.slots) { calloutBuckets[index].store(0, ordering: .relaxed) }
        latenessTotal.store(0, ordering: .relaxed)
        latenessMax.store(0, ordering: .relaxed)
        for index in 0..<Self.slots { latenessBuckets[index].store(0, ordering: .relaxed) }
        longest.withLock { $0 = nil }
        longestNanos.store(-1, ordering: .relaxed)
        resets.bump(by: 1)
        generation.store(before &+ 2, ordering: .releasing)
    }
}

extension Atomic where Value == Int {
    /// Adds `amount`: a relaxed load and store, for an atomic with one writer.
    @inline(__always)
    func bump(by amount: Int) { store(load(ordering: .relaxed) &+ amount, ordering: .relaxed) }
}

extension Atomic where Value == Int64 {
    /// Adds `amount`: a relaxed load and store, for an atomic with one writer.
    @inline(__always)
    func bump(by amount: Int64) { store(load(ordering: .relaxed) &+ amount, ordering: .relaxed) }
}
