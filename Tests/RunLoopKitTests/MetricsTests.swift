import Foundation
import RunLoopKit
import Synchronization
import Testing

@Suite("Metrics: busy and asleep time, wakes, callout durations and lateness, on the virtual clock")
struct MetricsTests {
    typealias Histogram = EVRunLoop.Metrics.Histogram

    @Test("off by default: a run records nothing")
    func offByDefault() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))
        #expect(!loop.recordsMetrics)
        #expect(loop.metrics == EVRunLoop.Metrics())
    }

    @Test("a timed run: every figure exact")
    func timedRun() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        loop.add(EVObserver(activities: .afterWaiting, label: "o") { _, _ in
            clock.advance(by: .microseconds(250))  // an observer that takes 0.25 ms
        }, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "t") { _ in
            clock.advance(by: .milliseconds(2))  // a callout that takes 2 ms
        }, forMode: .default)
        #expect(loop.run(mode: .default, for: .seconds(1)) == .finished)

        let metrics = loop.metrics
        // Asleep from 0 to 10 ms; awake 10–12.25 ms (the observer, then the timer).
        #expect(metrics.asleep == .milliseconds(10))
        #expect(metrics.busy == .microseconds(2_250))
        #expect(metrics.busyFraction == 2.25 / 12.25)
        #expect(metrics.passes == 1)
        #expect(metrics.wakes == [.deadline: 1])
        #expect(metrics.calloutCount == 2)

        var timer = Histogram()
        timer.count = 1
        timer.total = .milliseconds(2)
        timer.max = .milliseconds(2)
        timer.buckets[79] = 1  // [1,835,008, 2,097,152) ns
        var observer = Histogram()
        observer.count = 1
        observer.total = .microseconds(250)
        observer.max = .microseconds(250)
        observer.buckets[67] = 1  // [229,376, 262,144) ns
        #expect(metrics.callouts == [.timer: timer, .observer: observer])
        // The timer fired after the observer: 0.25 ms after its fire date.
        #expect(metrics.lateness == observer)
        #expect(metrics.longestCallout == EVRunLoop.Metrics.Callout(kind: .timer, label: "t", duration: .milliseconds(2)))
        #expect(metrics.callouts[.timer]?.percentile(0.5) == .milliseconds(2))
        #expect(metrics.callouts[.timer]?.mean == .milliseconds(2))
    }

    @Test("callouts that take no time: the first is the longest, each kind's max is zero")
    func zeroLengthCallouts() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        loop.recordsMetrics = true
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "first") { _ in }, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(20), repeats: false, label: "second") { _ in }, forMode: .default)
        #expect(loop.run(mode: .default, for: .seconds(1)) == .finished)
        let metrics = loop.metrics
        #expect(metrics.callouts[.timer]?.count == 2)
        #expect(metrics.callouts[.timer]?.max == .zero)
        #expect(metrics.longestCallout == EVRunLoop.Metrics.Callout(kind: .timer, label: "first", duration: .zero))
        loop.resetMetrics()
        #expect(loop.metrics.longestCallout == nil)
        #expect(loop.metrics.callouts.isEmpty)
    }

    @Test("lateness: a tolerant timer served by a later one's wake; percentiles")
    func lateness() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        let tolerant = EVTimer(interval: .milliseconds(10), repeats: false, label: "a") { _ in }
        tolerant.tolerance = 0.005
        loop.add(tolerant, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(14), repeats: false, label: "b") { _ in }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))

        let metrics = loop.metrics
        #expect(metrics.wakes == [.deadline: 1])  // one wake, at 14 ms, fires both
        #expect(metrics.asleep == .milliseconds(14))
        #expect(metrics.busy == .zero)
        #expect(metrics.lateness.count == 2)
        #expect(metrics.lateness.total == .milliseconds(4))
        #expect(metrics.lateness.max == .milliseconds(4))
        #expect(metrics.lateness.buckets[0] == 1)
        #expect(metrics.lateness.buckets[Histogram.bucket(of: .milliseconds(4))] == 1)
        #expect(Histogram.bucket(of: .milliseconds(4)) == 83)  // [3,670,016, 4,194,304) ns
        #expect(metrics.lateness.percentile(0.5) == .nanoseconds(1))  // the bucket of 0 ns
        #expect(metrics.lateness.percentile(0.99) == .milliseconds(4))
        #expect(metrics.callouts[.timer]?.count == 2)
    }

    @Test("passes, wakes and busy time over a repeating timer; blocks counted by kind; reset")
    func repeatingAndReset() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        let fires = LoopBox(0)
        let timer = EVTimer(interval: .milliseconds(100), repeats: true, label: "tick") { _ in
            fires.value += 1
            clock.advance(by: .milliseconds(fires.value))  // 1, 2, 3, 4, 5 ms
            loop.perform(label: "after") {}
        }
        loop.add(timer, forMode: .default)
        loop.run(mode: .default, for: .milliseconds(550))
        timer.invalidate()

        let metrics = loop.metrics
        #expect(fires.value == 5)
        #expect(metrics.callouts[.timer]?.total == .milliseconds(15))
        #expect(metrics.callouts[.timer]?.max == .milliseconds(5))
        #expect(metrics.callouts[.block]?.count == 5)
        #expect(metrics.callouts[.block]?.total == .zero)
        #expect(metrics.busy == .milliseconds(15))
        #expect(metrics.asleep == .milliseconds(535))
        #expect(metrics.busy + metrics.asleep == .milliseconds(550))
        #expect(metrics.wakes == [.deadline: 6])  // five fires and the run's deadline
        #expect(metrics.passes == 6)
        // Each timer fired exactly on its grid point, 100 ms apart: never late.
        #expect(metrics.lateness.count == 5)
        #expect(metrics.lateness.total == .zero)
        #expect(metrics.longestCallout?.label == "tick")

        loop.resetMetrics()
        var zero = EVRunLoop.Metrics()
        zero.resets = 1
        #expect(loop.metrics == zero)
        loop.recordsMetrics = false
        loop.perform(label: "b") {}
        loop.run(mode: .default, for: .zero)
        #expect(loop.metrics == zero)
    }

    @Test("a nested run's sleep is the loop's: busy and asleep add up to the outer run's time")
    func nestedRun() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "outer") { _ in
            clock.advance(by: .milliseconds(1))
            loop.add(EVTimer(interval: .milliseconds(5), repeats: false, label: "inner") { _ in loop.stop() },
                     forMode: .default)
            loop.run(mode: .default, for: .seconds(1))  // sleeps 5 ms, fires "inner", stops
            clock.advance(by: .milliseconds(1))
        }, forMode: .default)
        loop.run(mode: .default, for: .seconds(1))

        let metrics = loop.metrics
        #expect(metrics.asleep == .milliseconds(15))
        #expect(metrics.busy == .milliseconds(2))
        #expect(metrics.wakes == [.deadline: 2])
        #expect(metrics.longestCallout == EVRunLoop.Metrics.Callout(kind: .timer, label: "outer", duration: .milliseconds(7)))
    }

    @Test("a wake from another thread is a wakeUp; the snapshot reads the same from any thread")
    func wakeUpFromAnotherThread() async {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        let source = EVSource(label: "s") { _ in }  // keeps the mode alive with no deadline
        loop.add(source, forMode: .default)
        let waker = Thread {
            while loop.metrics.passes == 0 { usleep(1_000) }
            loop.perform(label: "stop") { loop.stop() }
        }
        waker.start()
        loop.run()  // until the stop
        let here = loop.metrics
        #expect(here.wakes == [.wakeUp: 1])
        #expect(here.callouts[.block]?.count == 1)
        let there = await Task.detached { loop.metrics }.value
        #expect(there == here)
        source.invalidate()
    }

    @Test("a callout and a lateness past the last bucket's lower bound count in the last bucket")
    func pastTheLastBucket() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        loop.recordsMetrics = true
        let long = Duration.nanoseconds(1 << 41)  // beyond 2^40 ns, where the last bucket starts
        loop.add(EVObserver(activities: .afterWaiting) { _, _ in clock.advance(by: long) }, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false) { _ in clock.advance(by: long) }, forMode: .default)
        #expect(loop.run(mode: .default, for: .seconds(10_000)) == .finished)
        let metrics = loop.metrics
        var last = Histogram()
        last.count = 1
        last.total = long
        last.max = long
        last.buckets[Histogram.bucketCount - 1] = 1
        #expect(metrics.callouts == [.timer: last, .observer: last])
        #expect(metrics.lateness == last)  // the timer fired after the observer
    }

    @Test("buckets: four to each power of two, each value inside its bucket's bounds")
    func buckets() {
        #expect((0..<8).map { Histogram.bucket(of: .nanoseconds($0)) } == [0, 1, 2, 3, 4, 5, 6, 7])
        #expect(Histogram.bucket(of: .nanoseconds(8)) == 8)
        #expect(Histogram.bucket(of: .nanoseconds(9)) == 8)
        #expect(Histogram.bucket(of: .nanoseconds(10)) == 9)
        #expect(Histogram.bucket(of: .nanoseconds(-5)) == 0)
        #expect(Histogram.bucket(of: .seconds(100_000)) == Histogram.bucketCount - 1)
        #expect(Histogram.bucket(of: .nanoseconds((1 << 40) - 1)) == Histogram.bucketCount - 1)
        #expect(Histogram.bucket(of: .nanoseconds(7 << 37)) == Histogram.bucketCount - 1)
        #expect(Histogram.bucket(of: .nanoseconds((7 << 37) - 1)) == Histogram.bucketCount - 2)
        #expect(Histogram.bucket(of: .nanoseconds(Int64.max)) == Histogram.bucketCount - 1)
        #expect(Histogram.lowerBound(ofBucket: Histogram.bucketCount) == .nanoseconds(1 << 40))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let nanos = Int64.random(in: 0..<(1 << 40), using: &generator) >> Int64.random(in: 0..<40, using: &generator)
            let bucket = Histogram.bucket(of: .nanoseconds(nanos))
            #expect(Histogram.lowerBound(ofBucket: bucket) <= .nanoseconds(nanos))
            #expect(Histogram.lowerBound(ofBucket: bucket + 1) > .nanoseconds(nanos))
            // A bucket spans at most a quarter of its lower bound (buckets 0–7 span one ns).
            func nanoseconds(_ duration: Duration) -> Int64 {
                duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
            }
            let lower = nanoseconds(Histogram.lowerBound(ofBucket: bucket))
            #expect(nanoseconds(Histogram.lowerBound(ofBucket: bucket + 1)) - lower <= max(1, lower / 4))
        }
    }

    @Test("a histogram's difference from an earlier snapshot")
    func subtracting() {
        var earlier = Histogram()
        earlier.count = 1
        earlier.total = .milliseconds(1)
        earlier.buckets[3] = 1
        var later = earlier
        later.count = 3
        later.total = .milliseconds(4)
        later.buckets[3] = 2
        later.buckets[7] = 1
        let delta = later.subtracting(earlier)
        #expect(delta.count == 2)
        #expect(delta.total == .milliseconds(3))
        #expect(delta.buckets[3] == 1 && delta.buckets[7] == 1 && delta.buckets.reduce(0, +) == 2)
    }
}

@Suite("Real time: metrics of a libev loop")
struct RealTimeMetricsTests {
    @Test("snapshots taken on another thread never go backwards under one reset count (issue 35, item 8)")
    func snapshotsAcrossResets() async {
        let spinner = ResettingLoop(resetEvery: 1_000)
        let loop = spinner.loop
        // The snapshots are taken on a thread of their own, not on the test's thread of the
        // cooperative pool: they spin until the 100th reset, long on a loaded machine.
        let (previous, snapshots, backwards) = await onFreshThreadAwaiting { () -> (EVRunLoop.Metrics, Int, Int) in
            var previous = loop.metrics
            var (snapshots, backwards) = (0, 0)
            // A deadline that a ThreadSanitizer build on a loaded machine meets too; the loop
            // ends at the 100th reset.
            let deadline = ContinuousClock.now + .seconds(90)
            while previous.resets < 100 && ContinuousClock.now < deadline {
                let now = loop.metrics
                snapshots += 1
                if now.resets == previous.resets
                    && (now.passes < previous.passes || now.calloutCount < previous.calloutCount
                        || now.busy < previous.busy || now.lateness.count < previous.lateness.count) {
                    backwards += 1
                }
                previous = now
            }
            return (previous, snapshots, backwards)
        }
        spinner.end()
        #expect(previous.resets >= 100, "the loop reset its metrics \(previous.resets) times in 90 s")
        #expect(backwards == 0, "\(backwards) of \(snapshots) snapshots went backwards under one reset count")
    }

    @Test("callouts, lateness, busy and asleep time of a repeating timer")
    func repeatingTimer() {
        let (fires, metrics, elapsed) = onFreshThread { () -> (Int, EVRunLoop.Metrics, Duration) in
            let loop = EVRunLoop.current
            loop.recordsMetrics = true
            let fires = LoopBox(0)
            let timer = EVTimer(interval: .milliseconds(5), repeats: true, label: "work") { timer in
                fires.value += 1
                usleep(1_000)  // 1 ms of a callout
                if fires.value == 10 { timer.invalidate() }
            }
            loop.add(timer, forMode: .default)
            let start = ContinuousClock.now
            loop.run(mode: .default, for: .seconds(30))
            return (fires.value, loop.metrics, ContinuousClock.now - start)
        }
        #expect(fires == 10)
        #expect(metrics.callouts[.timer]?.count == 10)
        #expect(metrics.callouts[.timer].map { $0.total >= .milliseconds(10) } == true)
        #expect(metrics.lateness.count == 10)
        #expect(metrics.busy >= .milliseconds(10))
        #expect(metrics.asleep > .zero)
        #expect(metrics.busy + metrics.asleep <= elapsed)
        #expect(metrics.wakeCount >= 1)
        #expect(metrics.longestCallout?.label == "work")
    }
}

/// A libev loop on a thread of its own that passes without sleeping, a callout each pass (a
/// manual source that signals itself), and resets its metrics every `resetEvery` callouts,
/// until ``end()``.
final class ResettingLoop: Sendable {
    private let made = Mutex<EVRunLoop?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// The loop.
    var loop: EVRunLoop { made.withLock { $0! } }

    init(resetEvery: Int) {
        let ready = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            let loop = EVRunLoop.current
            loop.recordsMetrics = true
            let count = LoopBox(0)
            let spin = EVSource(label: "spin") { source in
                count.value += 1
                if count.value % resetEvery == 0 { loop.resetMetrics() }
                if self.stopping.load(ordering: .relaxed) { loop.stop() } else { source.signal() }
            }
            loop.add(spin, forMode: .default)
            spin.signal()
            self.made.withLock { $0 = loop }
            ready.signal()
            loop.run(mode: .default, for: .seconds(120))
            spin.invalidate()
            self.done.signal()
        }
        ready.wait()
    }

    /// Stops the loop and waits for its thread's run to return.
    func end() {
        stopping.store(true, ordering: .relaxed)
        done.wait()
    }
}
