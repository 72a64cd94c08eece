import RunLoopKit

extension EVRunLoop {
    /// Runs the default mode for `seconds` (as given on the command line), or, when nil,
    /// until ``EVRunLoop/stop()`` is called or the mode has nothing left to fire.
    /// Loop thread only.
    public func runDefaultMode(forSeconds seconds: Double?) {
        if let seconds {
            run(mode: .default, for: .nanoseconds(Int64(seconds * 1e9)))
        } else {
            run()
        }
    }
}
