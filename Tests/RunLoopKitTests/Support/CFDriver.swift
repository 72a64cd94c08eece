import CoreFoundation
import Foundation
import RunLoopKit

/// ``LoopDriver`` over CoreFoundation's `CFRunLoop`: the reference every scenario's
/// RunLoopKit log is compared against.
final class CFDriver: LoopDriver, @unchecked Sendable {
    // Safe: used only on the thread that created it, except `CFRunLoopStop`/`WakeUp`,
    // which CF makes thread-safe, and `recorder`, which locks.
    let loop: CFRunLoop = CFRunLoopGetCurrent()
    let recorder = Recorder()
    private var observers: [String: CFRunLoopObserver] = [:]
    private var sources: [String: CFRunLoopSource] = [:]
    private var timers: [String: CFRunLoopTimer] = [:]

    static func mode(_ name: String) -> CFRunLoopMode {
        switch name {
        case "default": kCFRunLoopDefaultMode
        case "common": kCFRunLoopCommonModes
        default: CFStringCreateWithCString(nil, name, CFStringBuiltInEncodings.UTF8.rawValue)
        }
    }

    func addObserver(
        _ label: String, _ activities: EVRunLoop.Activity, order: Int, repeats: Bool, mode: String,
        callout: @escaping @Sendable (EVRunLoop.Activity) -> Void
    ) {
        let recorder = recorder
        let observer = observers[label] ?? CFRunLoopObserverCreateWithHandler(
            nil, CFOptionFlags(activities.rawValue), repeats, CFIndex(order)
        ) { _, activity in
            let ours = EVRunLoop.Activity(rawValue: UInt(activity.rawValue))
            recorder.append("\(label)@\(ours)")
            callout(ours)
        }!
        observers[label] = observer
        CFRunLoopAddObserver(loop, observer, Self.mode(mode))
    }

    func removeObserver(_ label: String, mode: String) {
        CFRunLoopRemoveObserver(loop, observers[label]!, Self.mode(mode))
    }

    func invalidateObserver(_ label: String) { CFRunLoopObserverInvalidate(observers[label]!) }

    func addTimer(_ label: String, after seconds: Double, interval: Double, mode: String,
                  callout: @escaping @Sendable () -> Void) {
        let recorder = recorder
        let timer = CFRunLoopTimerCreateWithHandler(
            nil, CFAbsoluteTimeGetCurrent() + seconds, interval, 0, 0
        ) { _ in
            recorder.append("timer(\(label))")
            callout()
        }
        timers[label] = timer
        CFRunLoopAddTimer(loop, timer, Self.mode(mode))
    }

    func setTimerFireDate(_ label: String, after seconds: Double) {
        CFRunLoopTimerSetNextFireDate(timers[label]!, CFAbsoluteTimeGetCurrent() + seconds)
    }

    func invalidateTimer(_ label: String) { CFRunLoopTimerInvalidate(timers[label]!) }

    func perform(_ label: String, modes: [String], body: @escaping @Sendable () -> Void) {
        let recorder = recorder
        let modeArray = modes.map { Self.mode($0) as AnyObject } as NSArray
        let modeArg: CFTypeRef = modes.count == 1 ? Self.mode(modes[0]) : modeArray
        CFRunLoopPerformBlock(loop, modeArg) {
            recorder.append("block(\(label))")
            body()
        }
    }

    func addSource(_ label: String, order: Int, mode: String, callout: @escaping @Sendable () -> Void) {
        if let source = sources[label] {
            CFRunLoopAddSource(loop, source, Self.mode(mode))
            return
        }
        let recorder = recorder
        let box = SourceBox {
            recorder.append("source(\(label))")
            callout()
        }
        // The source owns the box: created with its +1, released with the source.
        var context = CFRunLoopSourceContext(
            version: 0, info: Unmanaged.passRetained(box).toOpaque(), retain: nil,
            release: { info in Unmanaged<SourceBox>.fromOpaque(info!).release() },
            copyDescription: nil, equal: nil, hash: nil, schedule: nil, cancel: nil,
            perform: { info in Unmanaged<SourceBox>.fromOpaque(info!).takeUnretainedValue().perform() })
        let source = CFRunLoopSourceCreate(nil, CFIndex(order), &context)!
        sources[label] = source
        CFRunLoopAddSource(loop, source, Self.mode(mode))
    }

    func signalSource(_ label: String) { CFRunLoopSourceSignal(sources[label]!) }
    func invalidateSource(_ label: String) { CFRunLoopSourceInvalidate(sources[label]!) }
    func removeSource(_ label: String, mode: String) { CFRunLoopRemoveSource(loop, sources[label]!, Self.mode(mode)) }

    func run(_ mode: String, seconds: Double, returnAfterSourceHandled: Bool) -> EVRunLoop.RunResult {
        let raw = CFRunLoopRunInMode(Self.mode(mode), seconds, returnAfterSourceHandled)
        let result = EVRunLoop.RunResult(rawValue: Int(raw.rawValue))!
        recorder.append("return(\(result))")
        return result
    }

    func tearDown() {
        for observer in observers.values { CFRunLoopObserverInvalidate(observer) }
        for timer in timers.values { CFRunLoopTimerInvalidate(timer) }
        for source in sources.values { CFRunLoopSourceInvalidate(source) }
        observers = [:]
        timers = [:]
        sources = [:]
    }

    func stop() { CFRunLoopStop(loop) }
    func wakeUp() { CFRunLoopWakeUp(loop) }
    func addCommonMode(_ mode: String) { CFRunLoopAddCommonMode(loop, Self.mode(mode)) }
    func nextFireDate(_ label: String) -> Double { CFRunLoopTimerGetNextFireDate(timers[label]!) }
    func wallNow() -> Double { CFAbsoluteTimeGetCurrent() }
}

/// The `info` of a version-0 CF source: the closure its `perform` callback runs.
private final class SourceBox {
    let perform: () -> Void
    init(perform: @escaping () -> Void) { self.perform = perform }
}
