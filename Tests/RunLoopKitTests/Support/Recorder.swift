import Foundation
import RunLoopKit
import Synchronization

/// A thread-safe list of strings that timer, source and block callouts (which are
/// `@Sendable`) can append to.
final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ line: String) {
        storage.withLock { $0.append(line) }
        if Self.stalls, Int.random(in: 0..<4) == 0 { usleep(UInt32.random(in: 0..<250_000)) }
    }

    /// Whether `RUNLOOPKIT_TEST_STALLS` is set: then a random fourth of the lines appended are
    /// followed by a stall of up to 250 ms, as a loaded machine preempts a thread, so that
    /// `RUNLOOPKIT_TEST_STALLS=1 swift test --filter ...` finds the scenarios whose trace
    /// depends on how late their thread runs (on the virtual clock a stall changes nothing).
    static let stalls = ProcessInfo.processInfo.environment["RUNLOOPKIT_TEST_STALLS"] != nil

    var lines: [String] { storage.withLock { $0 } }

    var count: Int { storage.withLock { $0.count } }
}

/// True the first time it is called, false afterwards: for callouts that act only once.
final class Once: Sendable {
    private let done = Atomic<Bool>(false)

    func callAsFunction() -> Bool { !done.exchange(true, ordering: .relaxed) }
}

/// An integer that any thread can add to: for counting inside `@Sendable` callouts and tasks.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)

    func add(_ amount: Int = 1) { storage.add(amount, ordering: .relaxed) }

    var value: Int { storage.load(ordering: .relaxed) }
}
