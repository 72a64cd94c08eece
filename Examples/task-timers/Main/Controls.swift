import ExampleSupport
import RunLoopKit
import TaskTimers

/// What keys and signals do: forward key actions to the app, or quit.
final class Controls {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    private let loop: EVRunLoop
    /// The app the keys act on; nil during the tolerance comparison.
    var app: TaskTimersApp?
    /// Whether the run ended by a signal.
    private(set) var interrupted = false
    private var quitWithoutApp = false

    init(loop: EVRunLoop) { self.loop = loop }

    /// Whether the user asked to quit.
    var quitRequested: Bool { app?.quitRequested ?? quitWithoutApp }

    func handle(_ key: Key) {
        guard let action = TaskAction(key: key) else { return }
        if let app {
            app.perform(action)
        } else if action == .quit {
            quit()
        }
    }

    func interrupt() {
        interrupted = true
        quit()
    }

    private func quit() {
        if let app {
            app.perform(.quit)
        } else {
            quitWithoutApp = true
            loop.stop()
        }
    }
}
