extension EVRunLoop {
    /// Turns a closure that uses the caller's isolated state into a callout for a timer,
    /// source or block of a loop that runs in that isolation: code on the main actor, for
    /// ``main``; an actor pinned to a loop (``asUnownedSerialExecutor()``), for that loop;
    /// nonisolated code on a loop's own thread, for that thread's loop.
    ///
    /// ```swift
    /// @MainActor final class Model {
    ///     var ticks = 0
    ///     func start() {
    ///         let timer = EVTimer(interval: 1, repeats: true, block: EVRunLoop.isolated { _ in
    ///             self.ticks += 1  // main-actor state, no assumeIsolated, no unchecked box
    ///         })
    ///         EVRunLoop.main.add(timer, forMode: .common)
    ///     }
    /// }
    /// ```
    ///
    /// The compiler lets `body` use the caller's state because `body` stays in the caller's
    /// isolation; RunLoopKit cannot prove that the loop calls it there, so every call checks
    /// it and stops the program with a message otherwise: `body` must run where the caller's
    /// actor is isolated (its executor's thread), or — for nonisolated callers — on the
    /// thread that made it. Closures that are `@Sendable` need none of this and may be handed
    /// to any loop from any thread.
    ///
    /// - Parameters:
    ///   - isolation: the caller's isolation (`#isolation`); leave the default.
    ///   - body: the callout.
    /// - Returns: a `@Sendable` closure that checks the isolation, then calls `body`.
    ///
    /// There is no CFRunLoop counterpart; SwiftNIO's `NIOLoopBound` checks its loop the same way.
    public static func isolated<Argument>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping (Argument) -> Void
    ) -> @Sendable (Argument) -> Void {
        let callout = IsolatedCallout(isolation: isolation, body: body)
        return { argument in callout.call(argument) }
    }

    /// The argument-less form of ``isolated(isolation:_:)-(_,(Argument)->Void)``, for
    /// ``perform(inModes:label:_:)`` blocks.
    ///
    /// - Parameters:
    ///   - isolation: the caller's isolation (`#isolation`); leave the default.
    ///   - body: the block.
    /// - Returns: a `@Sendable` block that checks the isolation, then calls `body`.
    public static func isolated(
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping () -> Void
    ) -> @Sendable () -> Void {
        let callout = IsolatedCallout<Void>(isolation: isolation, body: body)
        return { callout.call(()) }
    }
}

/// A closure kept in the isolation it was made in, callable only there.
private struct IsolatedCallout<Argument>: @unchecked Sendable {
    // Safe to share: `body` is called only by `call`, after `checkIsolation()` verified that
    // the calling code runs in `isolation` (or, without an actor, on the thread that made it),
    // that is where `body` and everything it captured belong.
    let isolation: (any Actor)?
    /// The making thread's RunLoopKit number (``ThreadLoops/currentID``), never reused; a
    /// `pthread_t` would be: glibc hands a joined thread's to the next thread.
    let thread: UInt64
    let body: (Argument) -> Void

    init(isolation: (any Actor)?, body: @escaping (Argument) -> Void) {
        self.isolation = isolation
        thread = ThreadLoops.currentID
        self.body = body
    }

    func call(_ argument: Argument) {
        checkIsolation()
        body(argument)
    }

    private func checkIsolation() {
        if let isolation {
            isolation.preconditionIsolated(
                "EVRunLoop.isolated: a callout made isolated to \(type(of: isolation)) ran outside it; add it to the loop that actor runs on (EVRunLoop.main for the main actor, the loop of its unownedExecutor for a pinned actor)")
        } else if ThreadLoops.currentID != thread {
            fatalError("EVRunLoop.isolated: a callout made by nonisolated code on one thread ran on another; add it to the loop of the thread that made it, or pass a @Sendable closure instead")
        }
    }
}
