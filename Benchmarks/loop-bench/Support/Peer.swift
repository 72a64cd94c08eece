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

    /// Every peer but `measured`, each with `reason`: the other cells of a row only they fill.
    static func allBut(_ measured: Peer..., reason: String) -> [Peer: String] {
        Dictionary(uniqueKeysWithValues: allCases.filter { !measured.contains($0) }.map { ($0, reason) })
    }
}

extension Peer {
    /// The peer's name on the command line: its case's name in lower case (Task.sleep's: task).
    var key: String { self == .taskSleep ? "task" : String(describing: self).lowercased() }

    /// Every key, for help and errors.
    static var keys: String { allCases.map(\.key).joined(separator: ", ") }

    init?(key: String) {
        guard let peer = Peer.allCases.first(where: { $0.key == key.lowercased() }) else { return nil }
        self = peer
    }
}
