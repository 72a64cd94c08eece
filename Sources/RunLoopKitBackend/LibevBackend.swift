internal import CRunLoopKitLibev
import Synchronization
import RunLoopKitPlatform

/// The real backend: one libev loop (`ev_loop_new`) per `EVRunLoop`.
///
/// - Deadlines: a `CLOCK_MONOTONIC` timerfd armed at the absolute deadline, watched by an
///   `ev_io`. libev's own timers ride on `epoll_wait`'s millisecond timeout and land up to
///   ~1 ms late; the timerfd is an hrtimer, so the wake lands far closer (BENCHMARKS.md's
///   lateness rows).
/// - Precise deadlines (a zero-tolerance timer is due): the timerfd is armed early by the
///   wake-up latency this loop has been seeing, and the last stretch is spun on the
///   monotonic clock, so the wake lands closer still to the deadline. The lead adapts
///   (twice the running mean of the oversleep, between 10 and 250 µs), and spinning draws
///   on a budget of 1% of the loop thread's time: at high wake rates the loop falls back to
///   plain timerfd wakes rather than burn a core, and it stops spinning at all while the
///   budget could pay for fewer than one precise wake in four.
/// - Wakes: an eventfd of the loop's own, watched by an `ev_io`, with libev's `ev_async`
///   protocol redone in Swift (a pending flag, and a write only while the loop waits or is
///   about to); a wake sent outside a wait stays pending until the next wait or poll
///   consumes it, like CF's eventfd. Unlike `ev_async`, whose callback comes after libev
///   read the eventfd, the read waits until before the next sleep: a wake's work runs one
///   system call sooner.
/// - Wall-clock changes: a `CLOCK_REALTIME` timerfd with `TFD_TIMER_CANCEL_ON_SET`, whose
///   read fails with `ECANCELED` when the clock is set.
/// - Descriptors: one `ev_io` per watch, in an array indexed by the watch's token: watching,
///   unwatching and changing a descriptor's interest are O(1).
/// - Signals: not `ev_signal`, which binds a signal to one loop: the C shim's process-wide
///   handler marks the signal pending in this loop's receiver and writes the wake's eventfd,
///   whose callback takes the pending signals (``SignalClaims``).
///
/// Callbacks only record what happened; the core runs every callout after `ev_run` returns.
final class LibevBackend: Backend, @unchecked Sendable {
    // Safe to share: every member is used only on the loop's thread, except the atomics
    // (`wakeFD`, `wakePending`, `wakeWanted`, `backendDescriptor`), which ``wakeUp()`` and
    // ``pollDescriptor`` use from any thread.
    private let loop: OpaquePointer
    /// The wake's eventfd (see ``wakeUp()``).
    private var wake: Watcher
    /// ``wake``'s descriptor, for ``wakeUp()`` on any thread (another only in a forked child).
    private let wakeFD: Atomic<Int32>
    /// A wake was sent and no wait or poll has taken it yet (libev's `async_pending`).
    private let wakePending = Atomic<Bool>(false)
    /// The loop waits or is about to, or another loop polls for it: a wake must write the
    /// eventfd (libev's `pipe_write_wanted`).
    private let wakeWanted = Atomic<Bool>(false)
    /// The eventfd was readable in a wait and has not been read since: read before the next
    /// sleep, so that it does not end that sleep at once.
    private var wakeUnread = false
    private var deadline: Watcher
    private var wallClock: Watcher
    /// The process's fork count (``CRunLoopKitLibev``'s `pthread_atfork` child handler) when the
    /// loop's kernel objects were last made: another value means this is a forked child.
    /// An atomic because ``wakeUp()`` reads it on any thread.
    private let forkGeneration = Atomic<UInt32>(ProcessForks.generation)
    private var armedDeadline: Int64 = -1
    /// Whether the deadline timerfd fired during the current wait, and whether anything
    /// else (a wake, a descriptor, a signal) did.
    private var deadlineFired = false
    private var otherEvent = false
    var collectedEvents: Bool { otherEvent }
    private(set) var expiredDeadlineNanos: Int64?
    /// Running mean of how late the kernel wakes us after the timerfd's expiry (ns).
    private var meanOversleep: Int64 = 50_000
    /// Spin budget (ns): grows by 1% of elapsed time, up to 2 ms; spinning spends it.
    private var spinBudget: Int64 = 2_000_000
    private var budgetUpdated: Int64 = SystemClock.monotonicNanoseconds()
    /// Running mean of the time between precise waits (ns), and when the last one began.
    private var meanPrecisePeriod: Int64 = 1_000_000_000
    private var lastPreciseWait: Int64 = 0
    /// Bounds the clock between readings, for ``nextGridPoint(after:every:)`` and ``monotonicNanos(lateBy:)``.
    @exclusivity(unchecked) private var cycles = CycleClock()
    /// The last grid point ``nextGridPoint(after:every:)`` skipped to, with the schedule it
    /// was for: while the clock is certainly before it, it is the answer again for that
    /// schedule (timers made for one date fire one after another).
    private var lastSkip: (scheduled: Int64, interval: Int64, next: Int64) = (0, 0, .min)
    /// The last answer of ``monotonicNanos(lateBy:)`` (ns), which the next never precedes.
    private var latestLateNow: Int64 = .min
    /// The descriptor watchers, indexed by their token (a slot of the loop's
    /// `WatchTable`), and how many there are.
    /// `watchers` skips Swift's dynamic exclusivity checks: loop thread only, no access spans
    /// a callout.
    @exclusivity(unchecked) private var watchers: [Watcher?] = []
    private var watchCount = 0
    /// This loop's registration with the signal handler (created at its first signal
    /// watch), and the tokens watching each signal.
    private var signalReceiver: OpaquePointer?
    private var signalWatches: [Int32: [Int]] = [:]
    /// Whether `signalWatches` has any, asked before every wait (``verifySignals()``); loop
    /// thread only.
    private var watchesSignals = false
    /// Whether tolerant wakes go on ``WakeGrid/machine`` (see ``tolerantTarget(_:)``).
    var usesSharedGrid = false
    /// libev's backend descriptor (``pollDescriptor``): -2 until first asked, -1 if the
    /// backend has none. Set once; an atomic because any thread may ask.
    private let backendDescriptor = Atomic<Int32>(-2)
    /// The deadline armed for a foreign wait (ns; `.max` for none).
    private var foreignTarget: Int64 = .max
    /// Set from the start of a foreign wait's preparation to its end.
    private var foreignWaiting = false
    /// Whether an `ev_io` started, changed or stopped since a foreign wait's preparation last
    /// polled libev (libev applies such changes to its epoll set at its next iteration).
    fileprivate var watchesChangedSincePoll = true
    /// The sink of the wait in progress; nil outside `wait`. Unowned: the caller of `wait`
    /// holds it for the whole call.
    private(set) unowned(unsafe) var events: (any BackendEvents)?

    init() throws(SystemCallError) {
        ForkPreparation.settle()
        guard let loop = ev_loop_new(UInt32(EVFLAG_AUTO)) else {
            throw SystemCallError(call: "ev_loop_new", errno: SystemErrno.current)
        }
        self.loop = loop
        do {
            (wake, deadline, wallClock) = try Self.makeKernelWatchers()
        } catch {
            ev_loop_destroy(loop)
            throw error
        }
        wakeFD = Atomic(wake.fd)
        startKernelWatchers()
        ev_set_userdata(loop, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The wake's eventfd, the deadline's `CLOCK_MONOTONIC` timerfd and the wall clock's
    /// `CLOCK_REALTIME` one (none when one of them cannot be made).
    private static func makeKernelWatchers() throws(SystemCallError) -> (wake: Watcher, deadline: Watcher, wallClock: Watcher) {
        let wakeFD = KernelWakes.makeEventDescriptor()
        guard wakeFD >= 0 else { throw SystemCallError(call: "eventfd", errno: SystemErrno.current) }
        let deadlineFD = KernelWakes.makeTimerDescriptor(realtime: false)
        let wallFD = KernelWakes.makeTimerDescriptor(realtime: true)
        guard deadlineFD >= 0, wallFD >= 0 else {
            let code = SystemErrno.current
            if deadlineFD >= 0 { Descriptors.close(deadlineFD) }
            Descriptors.close(wakeFD)
            throw SystemCallError(call: "timerfd_create", errno: code)
        }
        return (Watcher(io: wakeFD, interest: .read, token: -1), Watcher(io: deadlineFD, interest: .read, token: -1),
                Watcher(io: wallFD, interest: .read, token: -1))
    }

    /// Starts the kernel watchers. The wake's readiness is noted, not read (``takeWake()``),
    /// and any signal that arrived is reported, its handler having written the eventfd.
    private func startKernelWatchers() {
        wake.start(on: loop, owner: self) { backend, _ in
            backend.wakeUnread = true
            if backend.signalReceiver != nil { backend.reportSignals() }
        }
        deadline.start(on: loop, owner: self) { backend, _ in
            if KernelWakes.consumeTimer(backend.deadline.fd) == .expired { backend.deadlineFired = true }
            backend.armedDeadline = -1
        }
        wallClock.start(on: loop, owner: self) { backend, _ in
            if KernelWakes.consumeTimer(backend.wallClock.fd) == .clockChanged {
                backend.otherEvent = true
                backend.events?.wallClockChanged()
            }
            backend.armWallClockWatch()
        }
        armWallClockWatch()
    }

    /// Whether this process is a forked child that the loop has not adopted yet.
    private var isUnadoptedChild: Bool {
        forkGeneration.load(ordering: .acquiring) != ProcessForks.generation
    }

    /// In a forked child, before the loop first touches a kernel object (a wait, or either
    /// half of another loop's wait): the child shares the parent's epoll instance and
    /// timerfds (open file descriptions), so waiting on them, arming them or reading them
    /// would take the parent's events and move its deadline. libev makes a new epoll
    /// instance and re-registers every watch (`ev_loop_fork`); the timerfds are made anew;
    /// the signal receiver answers to this process; the ``pollDescriptor`` handed out before
    /// names the new epoll instance (see ``keepPollDescriptor()``). `events` adopts the
    /// loop's other kernel objects first (its watch changes go into the re-registration).
    private func adoptForkedChild(_ events: any BackendEvents) {
        events.forked()
        ev_loop_fork(loop)
        for watcher in [wake, deadline, wallClock] {
            watcher.stop(on: loop)
            Descriptors.close(watcher.fd)
        }
        do {
            (wake, deadline, wallClock) = try Self.makeKernelWatchers()
        } catch {
            misuse("EVRunLoop.run: after fork(), the child cannot make the loop's eventfd and timerfds: \(error)")
        }
        wakeFD.store(wake.fd, ordering: .releasing)
        wakeUnread = false
        armedDeadline = -1
        startKernelWatchers()
        if let signalReceiver {
            clibev_signal_receiver_adopt(signalReceiver, wake.fd)
            // Signals that came in the child before this are marked, not written: the next
            // sleep reads them (`readWake()`).
            wakeUnread = true
        }
        // libev makes its new epoll instance at its next iteration (`loop_fork`); nothing is
        // collected here (no sink), and what is ready stays ready (level-triggered).
        ev_run(loop, Int32(EVRUN_NOWAIT))
        keepPollDescriptor()
        forkGeneration.store(ProcessForks.generation, ordering: .releasing)
    }

    /// After `ev_loop_fork`: the number handed out as ``pollDescriptor`` (which a driving
    /// loop registered, as GLib does with `g_source_add_unix_fd`) is made to name the new
    /// epoll instance, if libev's new one got another number. libev closed that number a
    /// moment before (`epoll_fork`), so it is free unless another thread of the child opened
    /// a descriptor in between.
    private func keepPollDescriptor() {
        let handedOut = backendDescriptor.load(ordering: .acquiring)
        guard handedOut >= 0 else { return }
        let fresh = clibev_backend_fd(loop)
        guard fresh >= 0, fresh != handedOut else { return }
        if !Descriptors.duplicate(fresh, onto: handedOut) {
            let code = SystemErrno.current
            misuse("EVRunLoop: after fork(), the child cannot keep the loop's poll descriptor \(handedOut): "
                + "\(SystemCallError(call: "dup3", errno: code))")
        }
    }

    deinit {
        for case let watcher? in watchers { watcher.stop(on: loop) }
        for (signal, tokens) in signalWatches {
            for _ in tokens { SignalClaims.release(signal) }
        }
        if let signalReceiver { clibev_signal_receiver_free(signalReceiver) }
        for watcher in [wake, deadline, wallClock] {
            watcher.stop(on: loop)
            Descriptors.close(watcher.fd)
        }
        ev_loop_destroy(loop)
    }

    func monotonicNanos() -> Int64 { SystemClock.monotonicNanoseconds() }

    /// From the CPU's counter, extrapolating the last anchored clock reading (``CycleClock``),
    /// unless `anchor` or there is none under a second old: then the clock, anchored.
    func measuringNow(anchor: Bool) -> Int64 {
        if !anchor, let nanos = cycles.estimate(at: CycleClock.ticks()) { return nanos }
        return anchoredNow()
    }

    /// The clock, anchoring the counter: out of line, so that the estimate above saves no
    /// registers (a small leaf on the fire path).
    @inline(never)
    private func anchoredNow() -> Int64 { cycles.read() }

    /// Answers from the CPU's counter when every reading within its bounds gives the same
    /// grid point (``CycleClock``); otherwise reads the clock, which anchors the counter's
    /// later bounds.
    ///
    /// Behind, a timer with the schedule of the last one that skipped gets the same grid
    /// point while the clock is certainly before it: that point was the first after an
    /// earlier reading, and no grid point lies between that reading and now.
    func nextGridPoint(after scheduled: Int64, every intervalNanos: Int64) -> Int64 {
        let start = scheduled
        let next = start.saturatingAdd(intervalNanos)
        let ticks = CycleClock.ticks()
        if cycles.isBefore(next, at: ticks) { return next }  // keeping up
        if lastSkip.scheduled == start, lastSkip.interval == intervalNanos, cycles.isBefore(lastSkip.next, at: ticks) {
            return lastSkip.next
        }
        return skip(from: start, every: intervalNanos, at: ticks)
    }

    /// The first grid point after now of a timer that is behind, from the counter's bounds
    /// or the clock; kept for the timers after it (``nextGridPoint(after:every:)``).
    @inline(never)
    private func skip(from start: Int64, every intervalNanos: Int64, at ticks: UInt64) -> Int64 {
        var skipping: Int64?
        if let (earliest, latest) = cycles.bounds(at: ticks) {
            // Every reading from `earliest` to `latest` skips to the same grid point.
            let point = start.firstGridPoint(every: intervalNanos, after: earliest)
            if latest < point { skipping = point }
        }
        let point = skipping ?? start.firstGridPoint(every: intervalNanos, after: cycles.read())
        lastSkip = (start, intervalNanos, point)
        return point
    }

    /// A bound from the CPU's counter (``CycleClock/upperBound(lateBy:)``) when one is that
    /// close; otherwise the clock, read, which anchors the bounds of the calls after it (so a
    /// burst of adds reads the clock once, then again when the anchor is too old).
    func monotonicNanos(lateBy slack: Int64) -> Int64 {
        guard let bound = cycles.upperBound(lateBy: slack) else { return lateNowFromClock() }
        latestLateNow = max(latestLateNow, bound)
        return latestLateNow
    }

    /// ``monotonicNanos(lateBy:)`` from a clock reading: out of line, so that the bound's path saves no
    /// registers for its calls.
    @inline(never)
    private func lateNowFromClock() -> Int64 {
        latestLateNow = max(latestLateNow, cycles.read())
        return latestLateNow
    }

    /// From the CPU's counter when its bounds lie wholly before or after `nanos`; otherwise
    /// the clock, read, which anchors the counter's later bounds (so a loop reads the clock
    /// for its run's deadline about once a second, and near the deadline).
    func hasReached(_ nanos: Int64) -> Bool {
        guard nanos != .max else { return false }
        let ticks = CycleClock.ticks()
        if cycles.isBefore(nanos, at: ticks) { return false }
        if let (earliest, _) = cycles.bounds(at: ticks), earliest >= nanos { return true }
        return cycles.read() >= nanos
    }

    func wallNanos() -> Int64 { SystemClock.realtimeNanoseconds() }

    func wait(_ wait: Wait, events: any BackendEvents) {
        if isUnadoptedChild { adoptForkedChild(events) }
        verifySignals()
        self.events = events
        defer { self.events = nil }
        expiredDeadlineNanos = nil
        deadlineFired = false
        otherEvent = false
        let precise: Bool
        let target: Int64
        switch wait {
        case .poll: (precise, target) = (false, .min)
        case .until(let window): (precise, target) = (window.precise, window.precise ? window.latest : tolerantTarget(window))
        case .forever: (precise, target) = (false, .max)
        }
        // A poll needs no clock, and a wait that is not precise no reading of it unless the
        // CPU's counter cannot tell whether the target passed; a precise one reads it for
        // its spin lead.
        let now: Int64? = precise ? SystemClock.monotonicNanoseconds() : nil
        if target == .min || (now.map { target <= $0 } ?? hasReached(target)) {
            // A poll collects descriptor and signal readiness and consumes a pending wake, as
            // CF's zero-timeout wait reads its eventfd; with neither, there is nothing to do.
            // A wake's write (made while another loop polled for this one) is read too, so
            // that the descriptor does not stay readable for a wake already served.
            if takeWake() || watchCount > 0 { ev_run(loop, Int32(EVRUN_NOWAIT)) }
            if wakeUnread { readWake() }
            return
        }
        let lead = now.map { spinLead(now: $0) } ?? 0
        let armAt: Int64 = target == .max ? -1 : target - lead
        if let now, armAt >= 0 && armAt <= now {
            // Inside the lead: collect events, then spin.
            takeWake()
            ev_run(loop, Int32(EVRUN_NOWAIT))
        } else {
            if armAt != armedDeadline {
                // A deadline that cannot be armed would leave the loop asleep forever.
                if !KernelWakes.arm(deadline.fd, at: armAt) {
                    let code = SystemErrno.current
                    misuse("EVRunLoop: cannot arm the deadline timerfd at \(armAt) ns: \(SystemCallError(call: "timerfd_settime", errno: code))")
                }
                armedDeadline = armAt
            }
            // An iteration can end with no event: libev drops a stopped descriptor from epoll
            // lazily, when it next reports ready (the main queue's eventfd, left out of a
            // nested run's wait). Sleep again then, as CF's wait would.
            sleepUntilEvent()
            guard deadlineFired else { return }
            let oversleep = SystemClock.monotonicNanoseconds() - armAt
            meanOversleep += (oversleep - meanOversleep) / 8
        }
        if lead > 0 && !otherEvent { spin(until: target) }
        // The timerfd fired, or the lead was spun to the deadline with nothing else ready.
        if deadlineFired || (lead > 0 && !otherEvent) { expiredDeadlineNanos = target }
    }

    /// `ev_run` until the deadline fires or another event comes, the wake's eventfd read
    /// first if it is unread, and wakes wanted while the loop may sleep. A wake pending
    /// already (sent during the pass) ends the wait before it starts.
    ///
    /// An iteration can end with no event: libev drops a stopped descriptor from epoll
    /// lazily, when it next reports ready (the main queue's eventfd, left out of a nested
    /// run's wait), and a wake's write can come after the wait that took its flag (the
    /// eventfd then reads once more). Sleep again then, as CF's wait would.
    private func sleepUntilEvent() {
        repeat {
            if wakeUnread { readWake() }
            // Pairs with the exchange in `wakeUp()`: either the waker sees the wait wanted
            // and writes, or this load sees its flag (as in prepareForeignWait).
            wakeWanted.store(true, ordering: .sequentiallyConsistent)
            if !otherEvent && !wakePending.load(ordering: .sequentiallyConsistent) { ev_run(loop, Int32(EVRUN_ONCE)) }
            wakeWanted.store(false, ordering: .relaxed)
            takeWake()
        } while !deadlineFired && !otherEvent
    }

    /// Consumes a pending wake: the wait ends with an event, as when `ev_async`'s callback
    /// ran. Whether there was one.
    @discardableResult
    private func takeWake() -> Bool {
        guard wakePending.load(ordering: .relaxed) && wakePending.exchange(false, ordering: .acquiringAndReleasing) else {
            return false
        }
        otherEvent = true
        return true
    }

    /// Reads the wake's eventfd, which a wait found readable, and reports the signals that
    /// wrote it meanwhile.
    private func readWake() {
        wakeUnread = false
        _ = KernelWakes.consumeEvent(wake.fd)
        if signalReceiver != nil { reportSignals() }
    }

    /// Where to wake in a window that ends a tolerance: at the served fire date, but early
    /// enough that the wake's latency plus the callouts (a reserve of 1 ms plus twice the
    /// mean oversleep) still end within the tolerance; never before the first fire date.
    /// With the shared grid, at the grid point the window allows before that reserve (counted
    /// at most 1/16 of the window: ``WakeGrid``), if any.
    private func tolerantTarget(_ window: WakeWindow) -> Int64 {
        let reserve = 1_000_000 &+ 2 &* max(meanOversleep, 0)
        if usesSharedGrid, let point = WakeGrid.machine.place(window, reserve: reserve) {
            return point
        }
        let (first, served, latest) = (window.first, window.served, window.latest)
        guard served != latest else { return latest }
        return max(first, min(served, latest &- reserve))
    }

    /// How early to wake for a precise deadline (see ``spinLead(budget:meanOversleep:meanPeriod:)``).
    private func spinLead(now: Int64) -> Int64 {
        spinBudget = min(spinBudget + (now - budgetUpdated) / 100, 2_000_000)
        budgetUpdated = now
        if lastPreciseWait != 0 { meanPrecisePeriod += (now - lastPreciseWait - meanPrecisePeriod) / 8 }
        lastPreciseWait = now
        return Self.spinLead(budget: spinBudget, meanOversleep: meanOversleep, meanPeriod: meanPrecisePeriod)
    }

    /// How early to wake for a precise deadline and spin the rest: twice the mean oversleep
    /// (10–250 µs); 0 when the spin budget cannot pay for it, or when precise waits come so
    /// often that the budget (1% of the time) pays for fewer than one in four of them
    /// (`25 * lead > meanPeriod`): spinning before a few random wakes buys no steady
    /// precision, only the 1% of a core, spread over every fire of the timers sharing them.
    static func spinLead(budget: Int64, meanOversleep: Int64, meanPeriod: Int64) -> Int64 {
        let lead = min(max(2 * meanOversleep, 10_000), 250_000)
        return budget >= lead && 25 * lead <= meanPeriod ? lead : 0
    }

    /// Busy-waits on the monotonic clock until `target` (at most the lead: ≤ 250 µs),
    /// charging the spin budget.
    private func spin(until target: Int64) {
        let start = SystemClock.monotonicNanoseconds()
        var now = start
        while now < target { now = SystemClock.monotonicNanoseconds() }
        spinBudget -= now - start
    }

    /// libev's `ev_async_send`, redone: marks a wake pending, and writes the eventfd if the
    /// loop waits or is about to (or another loop polls for it) and no wake was pending.
    func wakeUp() {
        guard !wakePending.load(ordering: .sequentiallyConsistent),
              !wakePending.exchange(true, ordering: .sequentiallyConsistent) else { return }
        // In a forked child not adopted yet the eventfd is the parent's: the wake stays
        // pending for the child's first wait, which adopts it first.
        if wakeWanted.load(ordering: .sequentiallyConsistent), !isUnadoptedChild {
            KernelWakes.increment(wakeFD.load(ordering: .relaxed))
        }
    }

    /// libev's epoll descriptor. It holds every descriptor libev watches (the deadline and
    /// wall-clock timerfds, the wake's eventfd, which caught signals write too, the
    /// descriptor sources), level-triggered, so it reads as readable while any of them is.
    var pollDescriptor: Int32? {
        var fd = backendDescriptor.load(ordering: .acquiring)
        if fd == -2 {
            fd = clibev_backend_fd(loop)
            backendDescriptor.store(fd, ordering: .releasing)
        }
        return fd >= 0 ? fd : nil
    }

    /// Whether `fd` is the number handed out as ``pollDescriptor``: a program that never asked
    /// for it has no number of it to add. Compares with the recorded number only, since reading
    /// libev's descriptor again (`clibev_backend_fd`) makes and destroys a loop, on every add.
    func isPollDescriptor(_ fd: Int32) -> Bool { fd >= 0 && fd == backendDescriptor.load(ordering: .relaxed) }

    var foreignDeadlinePassed: Bool { deadlineFired }

    /// Arms the deadline timerfd at the wait's target (a precise deadline at its instant: no
    /// lead, since another loop's poll cannot spin), then polls libev once: that applies the
    /// watch changes libev defers to its next iteration (so the epoll set is complete before
    /// another loop sleeps on it) and collects what is ready already. A wait prepared again
    /// before it finished, with nothing collected, the same deadline and no watch changed
    /// since its last poll, is not polled again: libev's set is complete, and what became
    /// ready since makes the descriptor readable for the other loop's poll (GLib prepares
    /// an attached loop's source in every iteration, most of them for its other sources).
    func prepareForeignWait(_ wait: Wait, events: any BackendEvents) -> Int64 {
        if isUnadoptedChild { adoptForkedChild(events) }
        verifySignals()
        self.events = events
        defer { self.events = nil }
        let preparedAgain = foreignWaiting
        // A foreign wait prepared again before it finished keeps what it collected (a wake
        // taken is gone: only this flag remembers it).
        if !foreignWaiting {
            expiredDeadlineNanos = nil
            deadlineFired = false
            otherEvent = false
        }
        let target: Int64
        switch wait {
        case .poll: target = .min
        case .until(let window): target = window.precise ? window.latest : tolerantTarget(window)
        case .forever: target = .max
        }
        foreignTarget = target
        foreignWaiting = true
        // As before a sleep (`sleepUntilEvent()`): the eventfd read, then wakes wanted (a
        // pending one is taken after the poll below).
        if wakeUnread { readWake() }
        wakeWanted.store(true, ordering: .sequentiallyConsistent)
        let armAt: Int64 = target == .max ? -1 : max(target, 0)
        if armAt != armedDeadline {
            if !KernelWakes.arm(deadline.fd, at: armAt) {
                let code = SystemErrno.current
                misuse("EVRunLoop: cannot arm the deadline timerfd at \(armAt) ns: \(SystemCallError(call: "timerfd_settime", errno: code))")
            }
            armedDeadline = armAt
        } else if preparedAgain && !otherEvent && !deadlineFired && !watchesChangedSincePoll {
            takeWake()
            return target
        }
        watchesChangedSincePoll = false
        ev_run(loop, Int32(EVRUN_NOWAIT))
        takeWake()
        return target
    }

    func finishForeignWait(events: any BackendEvents) {
        if isUnadoptedChild { adoptForkedChild(events) }
        self.events = events
        defer { self.events = nil }
        foreignWaiting = false
        wakeWanted.store(false, ordering: .relaxed)
        ev_run(loop, Int32(EVRUN_NOWAIT))
        // Read now, not before the next wait: the other loop's next poll must not find the
        // descriptor readable for a wake this dispatch serves.
        if wakeUnread { readWake() }
        takeWake()
        if deadlineFired { expiredDeadlineNanos = foreignTarget }
    }

    var watchesKernelEvents: Bool { true }

    func watch(_ target: WatchTarget, token: Int) {
        while token >= watchers.count { watchers.append(nil) }
        watchCount += 1
        switch target {
        case .descriptor(let fd, let interest):
            let watcher = Watcher(io: fd, interest: interest, token: token)
            watcher.start(on: loop, owner: self, handler: nil)
            watchers[token] = watcher
        case .signal(let number):
            if signalReceiver == nil {
                guard let receiver = clibev_signal_receiver_new(wake.fd) else {
                    misuse("EVRunLoop.add(_:forMode:): signal \(number): more than \(CLIBEV_SIGNAL_RECEIVERS) loops "
                        + "watch signals at once")
                }
                signalReceiver = receiver
            }
            // Wanted before the handler is installed: an arrival in between would be taken
            // from the disposition before and given to no receiver.
            clibev_signal_receiver_want(signalReceiver, number, 1)
            SignalClaims.claim(number)
            signalWatches[number, default: []].append(token)
            watchesSignals = true
            // A thread inherits its creator's signal mask: a signal blocked in every thread
            // (as in children of some process launchers) would never arrive. The loop's
            // thread is the one that asked for it, so it takes it.
            SignalClaims.unblock(number)
        }
    }

    /// Stops the program with a message when a signal this loop watches was taken from the
    /// fan-out handler (`SignalClaims.verify(_:in:)`): its sources would wait for it forever.
    /// One `sigaction` read per watched signal, only in loops that watch signals.
    @inline(__always)
    private func verifySignals() {
        guard watchesSignals else { return }
        for signal in signalWatches.keys { SignalClaims.verify(signal, in: "EVRunLoop") }
    }

    /// Reports every watch of each signal that arrived since the last call (from the wake's
    /// callback, during a wait).
    private func reportSignals() {
        var arrived = clibev_signal_receiver_take(signalReceiver)
        while arrived != 0 {
            let signal = Int32(arrived.trailingZeroBitCount + 1)
            arrived &= arrived - 1
            for token in signalWatches[signal] ?? [] { report(token) }
        }
    }

    /// What a descriptor or signal watcher's callback does: notes the event and reports its
    /// token (called directly, with no closure context to retain per event).
    fileprivate func report(_ token: Int) {
        otherEvent = true
        events?.ready(token)
    }

    func setInterest(_ interest: WatchInterest, token: Int) {
        watchers[token]?.change(interest, on: loop)
    }

    func unwatch(_ token: Int) {
        if token < watchers.count, let watcher = watchers[token] {
            watchers[token] = nil
            watchCount -= 1
            watcher.stop(on: loop)
            return
        }
        guard let (signal, tokens) = signalWatches.first(where: { $0.value.contains(token) }) else { return }
        watchCount -= 1
        let remaining = tokens.filter { $0 != token }
        signalWatches[signal] = remaining.isEmpty ? nil : remaining
        watchesSignals = !signalWatches.isEmpty
        // Released before it is unwanted: the disposition before comes back first.
        SignalClaims.release(signal)
        if remaining.isEmpty { clibev_signal_receiver_want(signalReceiver, signal, 0) }
    }

    /// Arms the realtime timerfd far in the future, only so that a clock set cancels it.
    private func armWallClockWatch() {
        let yearAhead = SystemClock.realtimeNanoseconds() + 365 * 86_400 * 1_000_000_000
        // ECANCELED: the clock was set meanwhile; the watch reports it and re-arms.
        if !KernelWakes.arm(wallClock.fd, at: yearAhead, cancelOnSet: true), case let code = SystemErrno.current, !KernelWakes.isClockChange(code) {
            misuse("EVRunLoop: cannot arm the wall-clock timerfd: \(SystemCallError(call: "timerfd_settime", errno: code))")
        }
    }
}

/// One libev `ev_io` and the Swift closure it reports to.
private final class Watcher {
    typealias Handler = (LibevBackend, Int) -> Void

    private let raw: UnsafeMutableRawPointer
    let fd: Int32
    private var interest: WatchInterest
    private let token: Int
    private var handler: Handler?
    private unowned(unsafe) var owner: LibevBackend?

    init(io fd: Int32, interest: WatchInterest, token: Int) {
        raw = .allocate(byteCount: clibev_io_size(), alignment: 16)
        self.fd = fd
        self.interest = interest
        self.token = token
    }

    deinit { raw.deallocate() }

    private static let callback: clibev_callback = { _, watcher, _ in
        // The backend holds the watcher while it is started.
        let me = Unmanaged<Watcher>.fromOpaque(clibev_watcher_data(watcher)!).takeUnretainedValue()
        guard let owner = me.owner else { return }  // stopped
        if let handler = me.handler { handler(owner, me.token) } else { owner.report(me.token) }
    }

    /// `ev_io_init` + `ev_io_start`. A nil `handler`: each event is reported to the owner's
    /// events as this watcher's token.
    func start(on loop: OpaquePointer, owner: LibevBackend, handler: Handler?) {
        owner.watchesChangedSincePoll = true
        self.owner = owner
        self.handler = handler
        let io = raw.assumingMemoryBound(to: ev_io.self)
        clibev_io_init(io, Self.callback, fd, events)
        clibev_watcher_set_data(raw, Unmanaged.passUnretained(self).toOpaque())
        ev_io_start(loop, io)
    }

    /// libev's events for ``interest``.
    private var events: Int32 {
        (interest.contains(.read) ? Int32(EV_READ) : 0) | (interest.contains(.write) ? Int32(EV_WRITE) : 0)
    }

    /// Changes an `ev_io`'s events: `ev_io_stop`, `ev_io_set`, `ev_io_start` (libev's way).
    func change(_ interest: WatchInterest, on loop: OpaquePointer) {
        guard interest != self.interest else { return }
        owner?.watchesChangedSincePoll = true
        self.interest = interest
        let io = raw.assumingMemoryBound(to: ev_io.self)
        ev_io_stop(loop, io)
        clibev_io_init(io, Self.callback, fd, events)
        ev_io_start(loop, io)
    }

    /// `ev_io_stop`.
    func stop(on loop: OpaquePointer) {
        owner?.watchesChangedSincePoll = true
        ev_io_stop(loop, raw.assumingMemoryBound(to: ev_io.self))
        handler = nil
        owner = nil
    }
}
