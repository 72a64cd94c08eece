import Foundation
import Glibc
import RunLoopKit

/// ``LoopDriver`` over an ``EVRunLoop``.
final class EVDriver: LoopDriver, @unchecked Sendable {
    // Safe: used only on the loop's thread, except `loop.stop()`/`wakeUp()`, which are
    // thread-safe, and `recorder`, which locks.
    let loop: EVRunLoop
    let recorder = Recorder()
    private var observers: [String: EVObserver] = [:]
    private var sources: [String: EVSource] = [:]
    private var timers: [String: EVTimer] = [:]

    /// Whether runs are driven from a hand-written `poll()` loop through the loop's poll
    /// descriptor (``runPolled(_:seconds:returnAfterSourceHandled:)``) instead of by `run`.
    private let polled: Bool
    /// Whether the `poll()` loop is on the stack: a run inside a callout is a nested `run`.
    private var driving = false

    init(loop: EVRunLoop, polled: Bool = false) {
        self.loop = loop
        self.polled = polled
    }

    static func mode(_ name: String) -> EVRunLoop.Mode {
        switch name {
        case "default": .default
        case "common": .common
        default: EVRunLoop.Mode(name)
        }
    }

    func addObserver(
        _ label: String, _ activities: EVRunLoop.Activity, order: Int, repeats: Bool, mode: String,
        callout: @escaping @Sendable (EVRunLoop.Activity) -> Void
    ) {
        let recorder = recorder
        let observer = observers[label] ?? EVObserver(
            activities: activities, repeats: repeats, order: order, label: label
        ) { _, activity in
            recorder.append("\(label)@\(activity)")
            callout(activity)
        }
        observers[label] = observer
        loop.add(observer, forMode: Self.mode(mode))
    }

    func removeObserver(_ label: String, mode: String) {
        loop.remove(observers[label]!, forMode: Self.mode(mode))
    }

    func invalidateObserver(_ label: String) { observers[label]!.invalidate() }

    func addTimer(_ label: String, after seconds: Double, interval: Double, mode: String,
                  callout: @escaping @Sendable () -> Void) {
        let recorder = recorder
        let timer = EVTimer(
            fireAt: loop.wallNow.addingTimeInterval(seconds), interval: interval, repeats: interval > 0,
            label: label
        ) { _ in
            recorder.append("timer(\(label))")
            callout()
        }
        timers[label] = timer
        loop.add(timer, forMode: Self.mode(mode))
    }

    func setTimerFireDate(_ label: String, after seconds: Double) {
        timers[label]!.fireDate = loop.wallNow.addingTimeInterval(seconds)
    }

    func invalidateTimer(_ label: String) { timers[label]!.invalidate() }

    func perform(_ label: String, modes: [String], body: @escaping @Sendable () -> Void) {
        let recorder = recorder
        loop.perform(inModes: modes.map(Self.mode)) {
            recorder.append("block(\(label))")
            body()
        }
    }

    func addSource(_ label: String, order: Int, mode: String, callout: @escaping @Sendable () -> Void) {
        let recorder = recorder
        let source = sources[label] ?? EVSource(order: order, label: label) { _ in
            recorder.append("source(\(label))")
            callout()
        }
        sources[label] = source
        loop.add(source, forMode: Self.mode(mode))
    }

    func signalSource(_ label: String) { sources[label]!.signal() }
    func invalidateSource(_ label: String) { sources[label]!.invalidate() }
    func removeSource(_ label: String, mode: String) { loop.remove(sources[label]!, forMode: Self.mode(mode)) }

    func run(_ mode: String, seconds: Double, returnAfterSourceHandled: Bool) -> EVRunLoop.RunResult {
        // A zero timeout is one pass that never waits: nothing for another loop to poll.
        if polled && !driving && seconds > 0 {
            let result = runPolled(Self.mode(mode), seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
            recorder.append("return(\(result))")
            return result
        }
        let result = loop.run(mode: Self.mode(mode), for: .seconds(seconds),
                              returnAfterSourceHandled: returnAfterSourceHandled)
        recorder.append("return(\(result))")
        return result
    }

    /// The run, as a foreign loop does it: prepare, `poll()` the descriptor with the deadline
    /// it gave, dispatch; until a dispatch reports the run's end. A mode with nothing to run
    /// opens no run: that is `run`'s `finished`.
    private func runPolled(_ mode: EVRunLoop.Mode, seconds: Double, returnAfterSourceHandled: Bool) -> EVRunLoop.RunResult {
        driving = true
        defer { driving = false }
        // Beyond CF's TIMER_INTERVAL_LIMIT (about 16 years), no deadline, as in `run`.
        let nanos = seconds * 1e9
        let deadline = nanos > 504_911_232e9 ? .distantFuture : loop.now + .nanoseconds(Int64(nanos))
        var watch = pollfd(fd: loop.pollDescriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let wait = loop.preparePolledPass(mode: mode, until: deadline, returnAfterSourceHandled: returnAfterSourceHandled)
            if loop.currentMode == nil, wait == .never {
                loop.endPolledRun()
                return .finished
            }
            _ = poll(&watch, 1, wait.milliseconds(from: loop.now))
            if let result = loop.dispatchPolledPass() { return result }
        }
    }

    func tearDown() {
        for observer in observers.values { observer.invalidate() }
        for timer in timers.values { timer.invalidate() }
        for source in sources.values { source.invalidate() }
        observers = [:]
        timers = [:]
        sources = [:]
    }

    func stop() { loop.stop() }
    func wakeUp() { loop.wakeUp() }
    func addCommonMode(_ mode: String) { loop.addCommonMode(Self.mode(mode)) }
    func nextFireDate(_ label: String) -> Double { timers[label]!.fireDate.timeIntervalSinceReferenceDate }
    func wallNow() -> Double { loop.wallNow.timeIntervalSinceReferenceDate }
}
