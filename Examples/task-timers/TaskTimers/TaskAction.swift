import ExampleSupport
import Foundation

/// One thing the user does, from a key or a `--script` step.
public enum TaskAction: Hashable, Sendable {
    /// `a`: add a task.
    case add
    /// `d`: complete the selected task.
    case complete
    /// `k` or up arrow.
    case up
    /// `j` or down arrow.
    case down
    /// `s`: scroll, running the loop in the tracking mode for a while.
    case scroll
    /// `b`: go to the background, or come back.
    case toggleBackground
    /// `q`: quit.
    case quit
    /// Script only: wait this many seconds before the next step.
    case wait(Double)

    /// The action of a key, if it has one.
    public init?(key: Key) {
        switch key {
        case .up, .character("k"): self = .up
        case .down, .character("j"): self = .down
        case .character("a"): self = .add
        case .character("d"): self = .complete
        case .character("s"): self = .scroll
        case .character("b"): self = .toggleBackground
        case .character("q"): self = .quit
        default: return nil
        }
    }

    /// A script error, naming the step that could not be read.
    public struct ScriptError: Error, CustomStringConvertible {
        /// The step as written.
        public let step: String
        public var description: String {
            "cannot read script step \"\(step)\": use a, d, j, k, up, down, s, b, q or \"wait <seconds>\""
        }
    }

    /// The actions of a comma-separated script such as `"a,a,wait 1.5,s,d"`.
    public static func parse(script: String) throws(ScriptError) -> [TaskAction] {
        try script.split(separator: ",").map { raw throws(ScriptError) -> TaskAction in
            let step = raw.trimmingCharacters(in: .whitespaces)
            let words = step.split(separator: " ")
            if words.count == 2, words[0] == "wait", let seconds = Double(words[1]), seconds.isFinite, seconds >= 0 {
                return .wait(seconds)
            }
            switch step {
            case "up": return .up
            case "down": return .down
            default:
                guard step.count == 1, let action = TaskAction(key: .character(step.first!)) else {
                    throw ScriptError(step: step)
                }
                return action
            }
        }
    }
}
