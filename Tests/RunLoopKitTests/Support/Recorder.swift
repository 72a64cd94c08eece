import RunLoopKit
import Synchronization

/// A thread-safe list of strings that timer, source and block callouts (which are
/// `@Sendable`) can append to.
final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ line: String) { storage.withLock { $0.append(line) } }

    var lines: [String] { storage.withLock { $0 } }

    var count: Int { storage.withLock { $0.count } }
}
