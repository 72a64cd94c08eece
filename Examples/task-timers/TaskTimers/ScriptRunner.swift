import RunLoopKit

/// Plays a script of actions on a run loop: actions run one after another, and a wait
/// lets the loop run for that long (on a one-shot timer in the default mode) before the
/// rest. A quit action ends the script.
public final class ScriptRunner {
    // Not Sendable: it lives on its loop's thread. Its callouts reach it through
    // `EVRunLoop.isolated`, which checks that they run there.

    private var remaining: ArraySlice<TaskAction>
    private let loop: EVRunLoop
    private let perform: (TaskAction) -> Void
    private let finished: () -> Void
    private var waitTimer: EVTimer?

    /// Creates a runner; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - perform: runs one action (never a wait).
    ///   - finished: called after the last action, unless the script quit.
    public init(actions: [TaskAction], loop: EVRunLoop, perform: @escaping (TaskAction) -> Void,
                finished: @escaping () -> Void) {
        remaining = actions[...]
        self.loop = loop
        self.perform = perform
        self.finished = finished
    }

    /// Runs the actions up to the first wait.
    public func start() { step() }

    /// Stops the script where it is.
    public func cancel() {
        waitTimer?.invalidate()
        remaining = []
    }

    private func step() {
        while let action = remaining.popFirst() {
            switch action {
            case .wait(let seconds):
                let timer = EVTimer(interval: seconds, repeats: false, label: "script wait",
                    block: EVRunLoop.isolated { [weak self] _ in
                    self?.step()
                })
                waitTimer = timer
                loop.add(timer, forMode: .default)
                return
            case .quit:
                remaining = []
                perform(action)
                return
            default:
                perform(action)
            }
        }
        finished()
    }
}
