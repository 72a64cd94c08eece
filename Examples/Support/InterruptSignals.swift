import Glibc
import RunLoopKit

/// The signals that end an example's run early: SIGINT (Ctrl-C) and SIGTERM.
public enum InterruptSignals {
    /// One signal source for SIGINT and one for SIGTERM, labelled with the signal's name,
    /// each calling `handler` on the loop's thread. Add them to the modes that run and
    /// invalidate them when the run is over.
    public static func sources(_ handler: @escaping @Sendable () -> Void) -> [EVSource] {
        [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")].map { number, label in
            EVSource(signal: number, label: label) { _ in handler() }
        }
    }
}
