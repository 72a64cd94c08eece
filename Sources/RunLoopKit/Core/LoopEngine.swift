#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RunLoopKitBackend

/// Everything a loop keeps on its own thread: its modes and their tables, the queued blocks
/// and jobs, the descriptor watches, the wake stamps and statistics; and the code that runs
/// passes over them (`LoopEngine+Pass`, `+Timers`, `+Sources`, `+Jobs`, `+MainQueue`).
///
/// Not `Sendable`: only its loop's thread touches it. ``EVRunLoop`` is the facade other
/// threads see; it reaches its engine on the loop's thread, and hands work over through its
/// inbox otherwise (``EVRunLoop/enqueue(_:)``, whose tasks are given the engine).
///
/// The corresponding CF structure is the loop-thread part of `struct __CFRunLoop`.
final class LoopEngine {
    typealias Mode = EVRunLoop.Mode
    typealias Instant = EVRunLoop.Instant
    typealias Activity = EVRunLoop.Activity
    typealias RunResult = EVRunLoop.RunResult
    typealias Trace = EVRunLoop.Trace
    typealias Statistics = EVRunLoop.Statistics
    typealias Error = EVRunLoop.Error

    /// The facade that owns this engine, unretained (the facade holds the engine, and the
    /// engine runs only inside the facade's calls); set once, by ``attach(to:)``.
    private(set) var facade: Unmanaged<EVRunLoop>?
    /// The facade, without reference counting where the caller's use allows.
    var loop: EVRunLoop { facade!.takeUnretainedValue() }
    let backend: any Backend
    /// What other threads hand over (shared with the facade).
    let shared: LoopShared
    /// Whether this is ``EVRunLoop/main``'s engine, which services libdispatch's main queue.
    let isMainLoop: Bool

    // The hottest of these skip Swift's dynamic exclusivity checks (`@exclusivity(unchecked)`):
    // no access to them spans a callout, so accesses never overlap.
    var modes: [Mode: ModeState] = [:]
    var commonModeSet: Set<Mode> = [.default]
    /// The last answer of ``resolve(_:)``; cleared when the common modes change.
    var lastResolved: ResolvedMode?
    /// The state of the last concrete mode a timer was added to (adds to one mode in a row
    /// skip resolving it); its state is unowned: a loop never drops a mode state it holds in
    /// `modes` (``letGoOfEverything()`` clears this with them).
    var lastTimerMode: Mode?
    var lastTimerState: Unmanaged<ModeState>?
    /// The state the last run started with (a mode state, once made, is never replaced).
    var lastRunState: ModeState?
    var commonObservers = Members<EVObserver>()
    @exclusivity(unchecked) var commonTimers = Members<EVTimer>()
    var commonSources = Members<EVSource>()
    var alignedTimers: [ObjectIdentifier: EVTimer] = [:]
    @exclusivity(unchecked) var runStack: [ModeState] = []
    @exclusivity(unchecked) var blocks: [QueuedBlock] = []
    /// The buffer ``drainInbox()`` trades for the inbox's tasks, empty between drains.
    var spareTasks: [@Sendable (LoopEngine) -> Void] = []
    /// The backend's watches (signal sources, and the descriptor sources of `armedState`).
    @exclusivity(unchecked) var watches = WatchTable()
    /// The mode whose descriptor sources are watched: the running mode, or the last one run.
    var armedState: ModeState?
    /// Descriptor sources added to `armedState` while no run was in progress, to be watched
    /// when the next run of it starts (their descriptors are checked then).
    @exclusivity(unchecked) var pendingArms: [EVSource] = []
    /// How many descriptor sources are watched on each descriptor number (index: the number).
    @exclusivity(unchecked) var watchesPerDescriptor: [UInt32] = []
    /// The inotify instance the loop's file sources share (other threads register sources
    /// in it as they add them), its backend watch token (-1 while unwatched), the descriptor
    /// watched and the fork count it was made at, and how many sources of the armed mode
    /// want it watched.
    let inotify = InotifyInstance()
    var inotifyToken = -1
    var inotifyWatched: Int32 = -1
    var inotifyGeneration: UInt32 = 0
    var inotifyArmedSources = 0
    /// Sources the backend reported ready and that have not fired yet, in report order.
    @exclusivity(unchecked) var readySources: [EVSource] = []
    var wallClockWasSet = false
    /// The monotonic instant of the pass's wake (``EVRunLoop/wakeInstant``).
    var lastWakeInstant: Instant?
    /// ``lastWakeDate`` once a callout of the pass asked for it.
    private var lastWakeDateCache: Date?
    /// The deadline that ended the current pass's wait, if one did (``EVRunLoop/wakeDeadline``).
    var lastWakeDeadline: Instant?
    var stats = Statistics()
    /// libdispatch's main queue as this loop services it (``EVRunLoop/main`` only).
    var mainQueue = MainQueueState()
    /// Jobs of the loop's executor waiting to run, the batch running, and whether one runs.
    @exclusivity(unchecked) var jobs: [QueuedJob] = []
    var runningJobs: [QueuedJob] = []
    var isRunningJobs = false
    /// The run another loop drives through the poll descriptor, while one is open
    /// (`LoopEngine+Polled.swift`), and whether one of its calls is on the stack.
    var polledRun: PolledRun?
    /// The result of a polled run that ended outside a dispatch (a stop from its `entry`
    /// observer), for the next dispatch to report.
    var endedPolledRun: RunResult?
    var isInPolledCall = false
    /// Whether a block was queued on the loop's thread while a polled run waited, outside its
    /// callouts (by the driving loop's code): the wait must not sleep on it.
    var blockQueuedWhilePolled = false

    /// Records every activity and callout of this loop while set (``EVRunLoop/trace``).
    var trace: Trace?

    /// Reports callouts that run past a threshold while set (``EVRunLoop/reportStalls(over:_:)``).
    var stallWatch: StallWatch?

    /// Records the loop's health figures while set (``EVRunLoop/recordsMetrics``), unretained:
    /// the facade's `metricsStore` holds them for the loop's life, so the fire path reads
    /// them with no reference counting.
    var measuring: Unmanaged<LoopMetrics>?
    /// The metrics, for the paths that run once per pass or wait.
    var metrics: LoopMetrics? { measuring?.takeUnretainedValue() }
    /// While metrics are on and a run is in progress: the start of the loop's current busy
    /// stretch (its outermost run's start or its last wake, ns); nil otherwise.
    var awakeSince: Int64?
    /// While metrics are on and a polled run's wait is another loop's: when it began (ns).
    var polledAsleepAt: Int64?

    /// What a callout's end needs of its beginning: which recorders were on, the callout's
    /// kind, its trace entry, its start on the loop's clock and the stall watch's start.
    /// Plain values only (the trace and the stall watch by identity), so that making,
    /// copying and dropping a mark costs no reference counting.
    struct CalloutMark {
        /// ``traced``, ``watched``, ``measured``; 0 when no recorder is on.
        let recorders: UInt8
        let kind: EVRunLoop.CalloutKind
        let number: Int
        let start: Int64
        let started: Int64
        /// The trace's and the stall watch's addresses, as identities (never dereferenced).
        let traceID: UnsafeMutableRawPointer?
        let watchID: UnsafeMutableRawPointer?

        static let traced: UInt8 = 1, watched: UInt8 = 2, measured: UInt8 = 4

        static var none: CalloutMark { CalloutMark(recorders: 0, kind: .block, number: -1, start: 0, started: 0, traceID: nil, watchID: nil) }
    }

    /// Records `event` in the trace, if one is set, at the clock's reading now; `event` is
    /// made only then.
    @inline(__always)
    func traceEvent(_ event: @autoclosure () -> Trace.Event) {
        guard let trace else { return }
        traceRecord(trace, .event(event()))
    }

    /// Records `step` in `trace` at `instant` (default: the clock's reading now), with how
    /// deep in runs it is; `entering` is the mode of the run whose `entry` it is.
    @discardableResult
    func traceRecord(_ trace: Trace, _ step: Trace.Entry.Step, at instant: Instant? = nil, entering mode: Mode? = nil) -> Int {
        trace.record(step, at: instant ?? backend.now(), depth: runStack.count, entering: mode)
    }

    /// Records the start of a callout in the trace, the stall watch and the metrics, when
    /// any is set (three tests when none is); ``endCallout(_:_:)`` records how long it ran.
    /// `kind`: the event's, given where the event costs more to make (then the metrics alone
    /// never make it); `due`: a timer's fire date (ns), for the metrics' lateness; `chain`:
    /// the end of the callout just before, read by ``endCallout(_:_:)``, taken as this one's
    /// start instead of reading the clock again (a timer fired right after another).
    @inline(__always)
    func beginCallout(_ event: @autoclosure () -> Trace.Event, kind: EVRunLoop.CalloutKind? = nil, due: Int64 = .min,
                      after chain: Int64 = .min) -> CalloutMark {
        guard trace != nil || stallWatch != nil || measuring != nil else { return .none }
        guard trace == nil, stallWatch == nil, let measuring else { return beginWatchedCallout(event(), due: due, after: chain) }
        // The metrics alone, inlined: no trace entry, no stall watch, no event made.
        let start = chain != .min ? chain : calloutNow()
        if due != .min { measuring.takeUnretainedValue().recordLateness(nanos: start &- due) }
        return CalloutMark(recorders: CalloutMark.measured, kind: kind ?? event().calloutKind, number: -1, start: start,
                           started: 0, traceID: nil, watchID: nil)
    }

    /// The clock for a callout's start and end, with a trace or metrics: the one reading
    /// both take (``Backend/measuringNow(anchor:)``: the CPU's counter extrapolated from the
    /// reading anchored at the wake; the loop's clock on a virtual loop).
    @inline(__always)
    private func calloutNow() -> Int64 { backend.measuringNow(anchor: false) }

    @inline(never)
    private func beginWatchedCallout(_ event: Trace.Event, due: Int64, after chain: Int64) -> CalloutMark {
        // The trace and the watch unretained: the engine holds them for the whole call.
        let traced = trace.map(Unmanaged.passUnretained)
        let watch = stallWatch.map(Unmanaged.passUnretained)
        let kind = event.calloutKind
        var recorders: UInt8 = 0
        var start: Int64 = 0
        var number = -1
        if traced != nil || measuring != nil { start = chain != .min ? chain : calloutNow() }
        if let traced {
            recorders |= CalloutMark.traced
            number = traced._withUnsafeGuaranteedRef { traceRecord($0, .event(event), at: Instant(nanoseconds: start)) }
        }
        var started: Int64 = 0
        if let watch {
            recorders |= CalloutMark.watched
            started = watch.takeUnretainedValue().begin(kind, label: event.calloutLabel)
        }
        if let measuring {
            recorders |= CalloutMark.measured
            if due != .min { measuring.takeUnretainedValue().recordLateness(nanos: start &- due) }
        }
        return CalloutMark(recorders: recorders, kind: kind, number: number, start: start, started: started,
                           traceID: traced?.toOpaque(), watchID: watch?.toOpaque())
    }

    /// Records the end of the callout `mark` began: its duration in the trace and the
    /// metrics, its report if it stalled. `event` names it, made only when a stall report or
    /// a new longest callout needs its label (nil: the kind's name, for jobs and the main
    /// queue). A trace or stall watch replaced during the callout is left alone. Returns the
    /// clock's reading at the end, for the next callout's `chain` (`.min` when none was read).
    @inline(__always) @discardableResult
    func endCallout(_ mark: CalloutMark, _ event: @autoclosure () -> Trace.Event? = nil) -> Int64 {
        guard mark.recorders != 0 else { return .min }
        guard mark.recorders == CalloutMark.measured else { return endWatchedCallout(mark, event) }
        // The metrics alone, inlined: the label is made only for a new longest callout.
        let end = calloutNow()
        guard let measuring else { return .min }  // turned off by the callout
        if measuring.takeUnretainedValue().recordCallout(mark.kind, nanos: end &- mark.start) {
            recordLongest(mark, until: end, event())
        }
        return end
    }

    /// ``endCallout(_:_:)`` for a timer's callout with a trace or a stall watch on (the
    /// metrics alone take ``fireMeasured(_:_:due:after:)``), the timer passed as it is: its
    /// label is made here, not in a closure formed on the fire path.
    @inline(never)
    func endWatchedCallout(_ mark: CalloutMark, timer: EVTimer) -> Int64 {
        endWatchedCallout(mark, { .timer(timer.label ?? "timer") })
    }

    @inline(never)
    private func recordLongest(_ mark: CalloutMark, until end: Int64, _ event: Trace.Event?) {
        metrics?.recordLongest(mark.kind, nanos: max(end &- mark.start, 0), label: event?.calloutLabel ?? "\(mark.kind)")
    }

    /// Fires `timer` (its block, given the timer) with the metrics alone recording: its
    /// lateness from `due`, its duration. ``beginCallout(_:kind:due:after:)`` and
    /// ``endCallout(_:timer:)`` with no mark: only the start is kept across the callout, so
    /// nothing else is spilled around it. `chain`: the end of the callout just before (or
    /// `.min`); returns this one's end (`.min` if the callout turned the metrics off).
    @inline(__always)
    func fireMeasured(_ timer: EVTimer, _ measuring: Unmanaged<LoopMetrics>, due: Int64, after chain: Int64) -> Int64 {
        let start = chain != .min ? chain : calloutNow()
        measuring._withUnsafeGuaranteedRef { $0.recordLateness(nanos: start &- due) }
        timer.block(timer)
        let end = calloutNow()
        guard let measuring = self.measuring else { return .min }  // turned off by the callout
        if measuring._withUnsafeGuaranteedRef({ $0.recordCallout(.timer, nanos: end &- start) }) {
            recordLongestTimer(timer, from: start, until: end)
        }
        return end
    }

    @inline(never)
    private func recordLongestTimer(_ timer: EVTimer, from start: Int64, until end: Int64) {
        metrics?.recordLongest(.timer, nanos: max(end &- start, 0), label: timer.label ?? "timer")
    }

    @inline(never)
    private func endWatchedCallout(_ mark: CalloutMark, _ event: () -> Trace.Event?) -> Int64 {
        func label() -> String { event()?.calloutLabel ?? "\(mark.kind)" }
        var end: Int64 = .min
        if mark.recorders & (CalloutMark.traced | CalloutMark.measured) != 0 {
            end = calloutNow()
            if mark.recorders & CalloutMark.traced != 0, let traced = trace.map(Unmanaged.passUnretained),
               traced.toOpaque() == mark.traceID {
                traced._withUnsafeGuaranteedRef { $0.finish(mark.number, at: Instant(nanoseconds: end)) }
            }
            if mark.recorders & CalloutMark.measured != 0, let measuring,
               measuring.takeUnretainedValue().recordCallout(mark.kind, nanos: end &- mark.start) {
                recordLongest(mark, until: end, event())
            }
        }
        if mark.recorders & CalloutMark.watched != 0, let stallWatch,
           Unmanaged.passUnretained(stallWatch).toOpaque() == mark.watchID {
            stallWatch.end(mark.kind, label: label(), started: mark.started)
        }
        return end
    }

    /// Stops the stall watch, if one is set, and sets the one `makeNew` makes (nil: none).
    /// The old watch is released last, after the write to ``stallWatch`` has ended: its
    /// handler may hold the last reference to an object whose deinit calls back into the
    /// loop (stops or starts reports, runs the loop), which reads ``stallWatch`` again, and
    /// Swift's exclusivity check traps a read inside that write.
    func replaceStallWatch(_ makeNew: () -> StallWatch?) {
        let old = stallWatch
        old?.stop()
        stallWatch = makeNew()
        withExtendedLifetime(old) {}
    }

    /// Turns the metrics on (`new`) or off: the busy stretch in progress is counted to the
    /// old ones and starts again for the new.
    func setMetrics(_ new: LoopMetrics?) {
        if let metrics, let since = awakeSince {
            metrics.recordBusy(nanos: backend.measuringNow(anchor: true) &- since)
        }
        measuring = new.map(Unmanaged.passUnretained)
        awakeSince = nil
        restartAwakeClock()
    }

    /// Starts the busy stretch again from now, if metrics are on and a run is in progress
    /// (after the metrics were reset).
    func restartAwakeClock() {
        guard metrics != nil, !runStack.isEmpty else { return }
        awakeSince = backend.measuringNow(anchor: true)
    }

    /// The loop falls asleep at `instant` (metrics on): its busy stretch ends.
    func metricsFallAsleep(at instant: Int64) {
        guard let metrics, let since = awakeSince else { return }
        metrics.recordBusy(nanos: instant &- since)
        awakeSince = nil
    }

    /// The loop woke at `instant` for `reason` after sleeping since `asleepAt` (metrics on).
    func metricsWake(at instant: Int64, asleepAt: Int64, for reason: Trace.WakeReason) {
        guard let metrics else { return }
        metrics.recordWake(reason, asleep: instant &- asleepAt)
        awakeSince = instant
    }

    init(backend: any Backend, shared: LoopShared, isMainLoop: Bool) {
        self.backend = backend
        self.shared = shared
        self.isMainLoop = isMainLoop
        modes[.default] = ModeState(mode: .default, engine: self, isCommon: true)
    }

    /// Called once by the facade's initializer, the engine being made before the facade.
    func attach(to loop: EVRunLoop) { facade = .passUnretained(loop) }

    /// The engine goes with its loop: the timers' and sources' references to its mode states
    /// are cleared (``breakCycles()``).
    deinit {
        stallWatch?.stop()
        breakCycles()
    }


    /// Timers and sources point back at the mode states that hold them; clears those
    /// references before the states go, and tells each timer's ``EVTimer/loopReleased``
    /// hook. A timer's places name their states unowned (cleared so that none dangles: each
    /// state's queue releases its timers when the state goes); a source's ``EVSource/modes``
    /// holds them strongly (cleared so that the cycle ends).
    private func breakCycles() {
        let timers = modes.values.flatMap { $0.timers.allTimers }
        for timer in timers {
            timer.removeAllPlaces()
            timer.loopReleased?()
        }
        for state in modes.values {
            for source in state.manualSources + state.kernelSources + state.idleSources { source.modes.removeAll() }
        }
    }

    /// The engine's part of ``EVRunLoop/ownerThreadExited()``: lets go of queued blocks,
    /// timers, sources (their descriptors and signals unwatched) and observers.
    ///
    /// What they hold is released last, once every field is cleared: a deinit run by the
    /// release may call back into the engine on this thread (an observer's `invalidate()`
    /// reads `modes`), and must find neither a write to that field in progress (Swift's
    /// exclusivity check traps the read) nor a half-cleared engine.
    func letGoOfEverything() {
        let queued = blocks
        blocks = []
        replaceStallWatch { nil }
        for source in watches.sources { removeEverywhere(source) }
        closeInotify()
        breakCycles()
        let states = modes
        modes = [:]
        lastRunState = nil
        lastResolved = nil
        lastTimerMode = nil
        lastTimerState = nil
        armedState = nil
        pendingArms = []
        readySources = []
        commonObservers = Members()
        commonTimers = Members()
        commonSources = Members()
        alignedTimers = [:]
        withExtendedLifetime((queued, states)) {}  // the blocks (which may capture the loop) and the modes go last
    }
}

extension LoopEngine {
    /// ``EVRunLoop/addCommonMode(_:)`` on the loop's thread.
    func addCommonMode(_ mode: Mode) {
        guard commonModeSet.insert(mode).inserted else { return }
        lastResolved = nil
        modes[mode]?.isCommon = true
        guard !(commonObservers.isEmpty && commonTimers.isEmpty && commonSources.isEmpty) else { return }
        let state = modeState(mode)
        for observer in commonObservers.elements { state.insert(observer) }
        for timer in commonTimers.elements { insert(timer, into: state) }
        for source in commonSources.elements { insert(source, into: state) }
    }

    /// The state of `mode`, created on first use.
    func modeState(_ mode: Mode) -> ModeState {
        if let state = modes[mode] { return state }
        let state = ModeState(mode: mode, engine: self, isCommon: commonModeSet.contains(mode))
        modes[mode] = state
        return state
    }

    /// The concrete modes an operation on `mode` touches.
    func states(for mode: Mode) -> [ModeState] { resolve(mode).states }

    /// Whether `mode` is ``Mode/common``, and the concrete modes it stands for. The last
    /// answer is kept: adding many items to one mode hashes and compares its name once.
    func resolve(_ mode: Mode) -> ResolvedMode {
        if let last = lastResolved, last.mode == mode { return last }
        let isCommon = mode == .common
        let resolved = ResolvedMode(
            mode: mode, isCommon: isCommon, states: isCommon ? commonModeSet.map(modeState) : [modeState(mode)])
        lastResolved = resolved
        return resolved
    }

    /// ``EVRunLoop/add(_:forMode:)-(EVObserver,_)`` on the loop's thread, the observer checked.
    func add(_ observer: EVObserver, forMode mode: Mode) {
        if mode == .common { commonObservers.insert(observer) }
        for state in states(for: mode) { state.insert(observer) }
    }

    /// ``EVRunLoop/remove(_:forMode:)-(EVObserver,_)`` on the loop's thread.
    func remove(_ observer: EVObserver, forMode mode: Mode) {
        if mode == .common { commonObservers.remove(observer) }
        for state in states(for: mode) { state.remove(observer) }
    }

    func removeEverywhere(_ observer: EVObserver) {
        commonObservers.remove(observer)
        for state in modes.values { state.remove(observer) }
    }

    /// Takes what other threads handed over, under one acquisition of the lock: blocks and
    /// jobs join their queues, tasks run now. The arrays trade buffers (``Inbox``), so a
    /// drain allocates nothing once they have grown. A drain with no task (a performed block,
    /// a job: the wake → block path) leaves the tasks' buffers alone.
    func drainInbox() {
        guard shared.inboxPending.load(ordering: .acquiring) else { return }
        var tasks: [@Sendable (LoopEngine) -> Void] = []
        shared.inbox.withLock { inbox in
            shared.inboxPending.store(false, ordering: .relaxed)
            inbox.isWakeOwed = false
            blocks.takeAll(from: &inbox.blocks)
            jobs.takeAll(from: &inbox.jobs)
            guard !inbox.tasks.isEmpty else { return }
            // A task may drain again (a nested run): it then finds no spare buffer, not this one.
            swap(&tasks, &spareTasks)
            swap(&tasks, &inbox.tasks)
        }
        guard !tasks.isEmpty else { return }
        for task in tasks { task(self) }
        tasks.removeAll(keepingCapacity: true)
        spareTasks = tasks
    }

    /// Stamps the pass's wake; `deadline` is the one that ended its wait, if one did.
    func markWake(deadline: Instant? = nil) {
        lastWakeInstant = backend.now()
        lastWakeDateCache = nil
        lastWakeDeadline = deadline
    }

    /// The wall-clock date of the pass's wake (``EVRunLoop/wakeDate``): made on the pass's
    /// first ask from the wall clock then and the monotonic time since the wake, the same
    /// date a reading at the wake gives unless the wall clock was set in between, and kept
    /// for the rest of the pass. A pass nobody asks reads one clock, not two.
    var lastWakeDate: Date? {
        if let cached = lastWakeDateCache { return cached }
        guard let wake = lastWakeInstant else { return nil }
        let date = backend.date(atNanos: wake.nanoseconds)
        lastWakeDateCache = date
        return date
    }
}
