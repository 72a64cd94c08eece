import ExampleSupport
import RunLoopKit
import TodoCountdown

/// What keys and signals do to a run: move the selection, quit, or interrupt.
final class RunControls {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    private let loop: EVRunLoop
    /// The session the keys act on.
    var session: CountdownSession?
    /// Whether the user asked to quit (q, Ctrl-C).
    private(set) var quitRequested = false
    /// Whether the run ended by a signal.
    private(set) var interrupted = false

    init(loop: EVRunLoop) { self.loop = loop }

    func handle(_ key: Key) {
        switch key {
        case .up, .character("k"): session?.moveSelection(by: -1)
        case .down, .character("j"): session?.moveSelection(by: 1)
        case .character("q"):
            quitRequested = true
            loop.stop()
        default: break
        }
    }

    func interrupt() {
        interrupted = true
        quitRequested = true
        loop.stop()
    }
}
