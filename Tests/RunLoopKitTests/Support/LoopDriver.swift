import Foundation
import RunLoopKit
import Synchronization
import Testing

/// One scenario, written once, run on several run loops: RunLoopKit on the virtual clock,
/// RunLoopKit on libev, and CoreFoundation's CFRunLoop (the reference). Every driver
/// records the same log format as ``EVRunLoop/Trace``'s callout lines (`o1@entry`,
/// `timer(t)`, `block(b)`, `source(s)`, `return(timedOut)`), so logs compare directly.
///
/// Modes are named by strings: `"default"` and `"common"` map to the loops' constants.
/// Drivers are used only on the thread their loop runs on.
protocol LoopDriver: AnyObject, Sendable {
    var recorder: Recorder { get }
    func addObserver(
        _ label: String, _ activities: EVRunLoop.Activity, order: Int, repeats: Bool, mode: String,
        callout: @escaping @Sendable (EVRunLoop.Activity) -> Void)
    func removeObserver(_ label: String, mode: String)
    func invalidateObserver(_ label: String)
    func addTimer(_ label: String, after seconds: Double, interval: Double, mode: String,
                  callout: @escaping @Sendable () -> Void)
    func perform(_ label: String, modes: [String], body: @escaping @Sendable () -> Void)
    func addSource(_ label: String, order: Int, mode: String, callout: @escaping @Sendable () -> Void)
    func signalSource(_ label: String)
    func invalidateSource(_ label: String)
    func removeSource(_ label: String, mode: String)
    /// Moves timer `label`'s next fire date to `seconds` from now (negative: in the past).
    func setTimerFireDate(_ label: String, after seconds: Double)
    func invalidateTimer(_ label: String)
    @discardableResult
    func run(_ mode: String, seconds: Double, returnAfterSourceHandled: Bool) -> EVRunLoop.RunResult
    func stop()
    func wakeUp()
    func addCommonMode(_ mode: String)
    /// Timer `label`'s next fire date, in seconds of the loop's wall clock.
    func nextFireDate(_ label: String) -> Double
    /// The loop's wall clock now, in seconds on the scale of ``nextFireDate(_:)``.
    func wallNow() -> Double
    /// Ends the scenario: invalidates every observer, timer and source the driver made and
    /// lets them go. A scenario's callouts capture its driver, which holds what holds the
    /// callouts; this breaks that cycle, so the driver and its loop objects are freed.
    func tearDown()
}

/// The deadline of a run whose trace has passes that end before the one that waits for the
/// deadline (each pass ends by checking it), or that ends by its mode running empty: long
/// against the preemption of a loaded machine, so that no pass runs into it by chance. A
/// thread was seen to stall for 0.2 s with one core busy, and for more than 1 s with three
/// Swift builds running beside the suite (load 7). Such a run lasts this long on the real
/// loops; the scenarios wait for it concurrently.
let passDeadline = 2.5

extension LoopDriver {
    var log: [String] { recorder.lines }

    func addObserver(
        _ label: String, _ activities: EVRunLoop.Activity = .allActivities, order: Int = 0,
        repeats: Bool = true, mode: String = "default",
        callout: @escaping @Sendable (EVRunLoop.Activity) -> Void = { _ in }
    ) {
        addObserver(label, activities, order: order, repeats: repeats, mode: mode, callout: callout)
    }

    func addTimer(_ label: String, after seconds: Double, interval: Double = 0, mode: String = "default",
                  callout: @escaping @Sendable () -> Void = {}) {
        addTimer(label, after: seconds, interval: interval, mode: mode, callout: callout)
    }

    func perform(_ label: String, modes: [String] = ["default"], body: @escaping @Sendable () -> Void = {}) {
        perform(label, modes: modes, body: body)
    }

    func addSource(_ label: String, order: Int = 0, mode: String = "default",
                   callout: @escaping @Sendable () -> Void = {}) {
        addSource(label, order: order, mode: mode, callout: callout)
    }

    @discardableResult
    func run(_ mode: String = "default", seconds: Double, returnAfterSourceHandled: Bool = false)
        -> EVRunLoop.RunResult
    {
        run(mode, seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
    }
}

/// Runs `scenario` on `kind` and on CF, and checks that CF's log is `expected` (so a reader
/// sees what CF does) and that `kind`'s log equals CF's.
///
/// The two run at the same time, each on a thread of its own, and the caller's task suspends
/// meanwhile instead of blocking a thread of the cooperative pool: scenarios wait for real
/// deadlines chosen long against a loaded machine's preemption, and those waits overlap.
func checkAgainstCF(
    _ kind: LoopKind, _ expected: [String], _ scenario: @escaping @Sendable (any LoopDriver) -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    async let cf = runScenarioSuspending(on: .coreFoundation, scenario)
    async let log = runScenarioSuspending(on: kind, scenario)
    let (cfLog, ourLog) = await (cf, log)
    #expect(cfLog == expected, "CFRunLoop itself", sourceLocation: sourceLocation)
    #expect(ourLog == cfLog, sourceLocation: sourceLocation)
}

/// ``runScenario(on:_:)`` on a thread of its own, suspending the caller until it returns.
func runScenarioSuspending(
    on kind: LoopKind, _ scenario: @escaping @Sendable (any LoopDriver) -> Void
) async -> [String] {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: runScenario(on: kind, scenario)) }.start()
    }
}

/// Runs `body` on a new thread and suspends the caller until it returns, holding no thread of
/// the cooperative pool meanwhile: for bodies that take long (real time, much work), which
/// ``onFreshThread(_:)`` would hold one of the pool's few threads for.
func onFreshThreadAwaiting<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Runs `body` on a new thread and waits for it, blocking the calling thread: for short
/// bodies only (``onFreshThreadAwaiting(_:)`` otherwise), as the caller is a test's thread of
/// the cooperative pool, which the pool's other tasks cannot use meanwhile.
func onFreshThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<T?>(nil)
    let thread = Thread {
        result.withLock { $0 = body() }
        done.signal()
    }
    thread.start()
    done.wait()
    return result.withLock { $0! }
}

/// The loops a scenario runs on: RunLoopKit's two backends, RunLoopKit on libev driven by a
/// hand-written `poll()` loop through its poll descriptor, and CoreFoundation's.
enum LoopKind: String, CaseIterable, Sendable {
    case virtual, libev, polled, coreFoundation
}

/// Runs `scenario` on a fresh loop of `kind` and returns its log.
func runScenario(on kind: LoopKind, _ scenario: @escaping @Sendable (any LoopDriver) -> Void) -> [String] {
    switch kind {
    case .virtual:
        return onFreshThread {
            let driver = EVDriver(loop: EVRunLoop(clock: EVVirtualClock()))
            scenario(driver)
            driver.tearDown()
            return driver.log
        }
    case .libev:
        return onFreshThread {
            let driver = EVDriver(loop: EVRunLoop.current)
            scenario(driver)
            driver.tearDown()
            return driver.log
        }
    case .polled:
        return onFreshThread {
            let driver = EVDriver(loop: EVRunLoop.current, polled: true)
            scenario(driver)
            driver.tearDown()
            return driver.log
        }
    case .coreFoundation:
        return onFreshThread {
            let driver = CFDriver()
            scenario(driver)
            driver.tearDown()
            return driver.log
        }
    }
}

/// `EVRunLoop.current` for an exit test's body, which is `async` but runs its loop start to
/// finish without suspending, so the thread cannot change under it.
func currentLoopOfThisThread() -> EVRunLoop { EVRunLoop.current }

/// Runs `body` as a task preferring a new loop on a virtual clock, on a thread of its own, and
/// runs that loop until the task returns: virtual time jumps from timer to timer, so a test of
/// sleeps and ticks runs at once, at exact instants. Returns what the task returned (rethrowing
/// what it threw), or nil, with an issue recorded, when it had not returned after `limit` of
/// virtual time.
func onVirtualLoop<T: Sendable>(
    limit: Duration = .seconds(3_600), sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (EVRunLoop) async throws -> T
) throws -> T? {
    let outcome = onFreshThread { () -> Result<T, any Error>? in
        let loop = EVRunLoop(clock: EVVirtualClock())
        let keepAlive = EVSource { _ in }  // the mode stays alive while the task waits for a job
        loop.add(keepAlive, forMode: .default)
        let outcome = LoopBox<Result<T, any Error>?>(nil)
        Task(executorPreference: loop) {
            do { outcome.value = .success(try await body(loop)) } catch { outcome.value = .failure(error) }
            loop.stop()
        }
        let end = loop.now + limit
        while case .none = outcome.value, loop.now < end { loop.run(mode: .default, for: end - loop.now) }
        keepAlive.invalidate()
        return outcome.value
    }
    guard let outcome else {
        Issue.record("the task had not returned after \(limit) of virtual time", sourceLocation: sourceLocation)
        return nil
    }
    return try outcome.get()
}
