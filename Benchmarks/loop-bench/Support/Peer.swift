/// What every workload is measured on, in table order: the three run loops, then what a
/// Swift program on Linux uses for timers and events today.
enum Peer: String, CaseIterable, Codable, CodingKeyRepresentable, Sendable {
    /// RunLoopKit's `EVRunLoop`.
    case runLoopKit = "RunLoopKit"
    /// libev driven from C (the `CLibevBench` target).
    case libev = "libev (C)"
    /// Foundation's `RunLoop`/`Timer`, with CoreFoundation's `CFRunLoop` API where
    /// Foundation has no spelling (observers, `CFRunLoopWakeUp`).
    case foundation = "Foundation"
    /// libdispatch: `DispatchSourceTimer` with a leeway, read sources, a serial queue.
    case dispatch = "Dispatch"
    /// SwiftNIO: one `EventLoop` of a `MultiThreadedEventLoopGroup` (`scheduleTask`,
    /// `execute`, pipe channels, its `SerialExecutor`).
    case nio = "NIO"
    /// Swift concurrency: tasks looping on `Task.sleep`; in the job workload, tasks on the
    /// global executor.
    case taskSleep = "Task.sleep"
    /// swift-async-algorithms' `AsyncTimerSequence`, one per task.
    case timerSequence = "AsyncTimerSequence"

    /// The peers RunLoopKit is compared against.
    static let others: [Peer] = allCases.filter { $0 != .runLoopKit }
}

extension Peer {
    /// The peer's name on the command line.
    var key: String {
        switch self {
        case .runLoopKit: "runloopkit"
        case .libev: "libev"
        case .foundation: "foundation"
        case .dispatch: "dispatch"
        case .nio: "nio"
        case .taskSleep: "task"
        case .timerSequence: "timersequence"
        }
    }

    /// Every key, for help and errors.
    static var keys: String { allCases.map(\.key).joined(separator: ", ") }

    init?(key: String) {
        guard let peer = Peer.allCases.first(where: { $0.key == key.lowercased() }) else { return nil }
        self = peer
    }
}
