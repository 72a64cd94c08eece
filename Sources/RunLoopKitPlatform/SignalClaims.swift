internal import CRunLoopKitLibev
import Glibc

/// Which POSIX signals the loops' signal sources catch, and what each signal's disposition
/// was before.
///
/// A signal is caught once for the whole process, by the C shim's handler, which hands each
/// arrival to every loop watching the signal (as sd-event and GLib deliver to every watcher;
/// libev's `ev_signal` would bind the signal to one loop). The first watch of a signal in any
/// loop records its disposition and installs the handler; the last one to stop restores the
/// disposition (so an ignored signal is ignored again).
///
/// `SIGCHLD` is shared, not owned: every part of a program that waits for its children
/// checks its own on each arrival. A handler function it had before is chained (the C
/// shim's handler calls it after its own work), and a handler installed over the fan-out
/// later (GLib's child watch where it has no `pidfd_open`, which sets `SIG_DFL` again when
/// its last watch goes; the program's) is taken back and chained in turn: see
/// ``verify(_:in:)``.
package enum SignalClaims {
    private struct Claim {
        var watchers: Int
        /// The disposition the last release restores: the one before the first watch, or
        /// for `SIGCHLD` the one RunLoopKit last took the signal back from.
        var previous: sigaction
    }

    /// The claims, under the C shim's signal lock (`clibev_signals_lock`), not a `Mutex`: a
    /// `pthread_atfork` handler holds that lock across `fork()`, so a child never inherits it
    /// locked by a thread it does not have (one adding or removing a signal source while
    /// another thread forks), and can watch signals itself.
    private nonisolated(unsafe) static var claims: [Int32: Claim] = [:]

    /// Runs `body` on the claims, under the signal lock.
    private static func withClaims<T>(_ body: (inout [Int32: Claim]) -> T) -> T {
        clibev_signals_lock()
        defer { clibev_signals_unlock() }
        return body(&claims)
    }

    /// Records one more watch of `signal`, in any loop; the first installs the handler.
    package static func claim(_ signal: Int32) {
        withClaims { table in
            if table[signal] != nil {
                check(signal, in: "EVRunLoop.add(_:forMode:)", table: &table)
                table[signal]?.watchers += 1
                return
            }
            table[signal] = Claim(watchers: 1, previous: catchSignal(signal, in: "EVRunLoop.add(_:forMode:)"))
        }
    }

    /// Installs the fan-out handler for `signal` (chaining, for `SIGCHLD`, the handler it
    /// displaces) and returns the disposition it displaced. Under the lock.
    private static func catchSignal(_ signal: Int32, in call: String) -> sigaction {
        var displaced = sigaction()
        if clibev_signal_catch(signal, &displaced) != 0 {
            let code = errno
            misuse("\(call): cannot catch signal \(signal): \(SystemCallError(call: "sigaction", errno: code))")
        }
        return displaced
    }

    /// Stops the program with a message when `signal`, which a signal source watches, no
    /// longer has the fan-out handler: something else in the process took it (`signal()`,
    /// `sigaction()`, a `DispatchSource` signal source, such as swift-service-lifecycle's
    /// `ServiceGroup` makes for its `gracefulShutdownSignals`), and the sources watching it
    /// would never fire again. Nothing tells a process that a disposition changed: the loops
    /// check when a source is added, before each wait of a loop watching the signal, and when
    /// a `RunLoopKitServiceLifecycle` service starts (`verifyAll(in:)`).
    ///
    /// `SIGCHLD` set to another handler or to `SIG_DFL` is taken back instead
    /// (`takeBack`); set to `SIG_IGN` (children reaped by the kernel, their
    /// statuses lost) or to libdispatch's handler (a `DispatchSource`, whose signalfd takes
    /// arrivals before any handler runs) it stops the program like any other signal.
    package static func verify(_ signal: Int32, in call: String) {
        guard clibev_signal_disposition(signal) != 0 else { return }
        withClaims { table in check(signal, in: call, table: &table) }
    }

    /// ``verify(_:in:)`` under the lock.
    private static func check(_ signal: Int32, in call: String, table: inout [Int32: Claim]) {
        var now = sigaction()
        sigaction(signal, nil, &now)
        let disposition = clibev_signal_kind(&now)
        // libdispatch's handler is not taken back: its signal source reads a signalfd, which
        // takes an arrival before the fan-out runs about as often as not.
        if signal == SIGCHLD, disposition == 1 || (disposition == 3 && clibev_signal_handler_is_libdispatch(&now) == 0),
           table[signal] != nil {
            takeBack(signal, in: call, table: &table)
            return
        }
        stop(signal, disposition: disposition, in: call)
    }

    /// Installs the fan-out handler for `SIGCHLD` again over the one that took it, chains
    /// that one (a function; `SIG_DFL` chains nothing), makes it the one the last release
    /// restores, and hands every loop watching `SIGCHLD` an arrival: a child may have
    /// exited while the other handler alone had the signal, and an extra `SIGCHLD` only
    /// makes its waiters look at their children once more (GLib, libuv and sd-event also
    /// coalesce arrivals). Under the lock.
    private static func takeBack(_ signal: Int32, in call: String, table: inout [Int32: Claim]) {
        var displaced = catchSignal(signal, in: call)
        let kind = clibev_signal_kind(&displaced)
        if kind == 2 {
            // Set to SIG_IGN between the check and the catch: put it back and stop.
            sigaction(signal, &displaced, nil)
            stop(signal, disposition: kind, in: call)
        }
        table[signal]?.previous = displaced
        clibev_signal_hand_out(signal)
    }

    /// Stops the program: `signal` has the disposition `disposition`
    /// (`clibev_signal_disposition`), not the fan-out handler.
    private static func stop(_ signal: Int32, disposition: Int32, in call: String) {
        let now: String
        switch disposition {
        case 0: return
        case 1: now = "now the default action (SIG_DFL)"
        case 2: now = "now ignored (SIG_IGN)"
        case 3: now = "now another handler"
        default: return  // sigaction cannot fail for a signal a source could watch
        }
        let named = "\(call): signal \(signal)\(name(signal).map { " (\($0))" } ?? "")"
        if signal == SIGCHLD && disposition == 2 {
            misuse("\(named) has a signal or child source, but it was set to be ignored behind RunLoopKit's back "
                + "(\(now)): the kernel reaps every child as it exits, so no source learns of an exit or its "
                + "status. Ignore SIGCHLD only while no such source lives; to leave no zombies, watch each child "
                + "with a child source (EVSource(childProcess:)), which reaps it (a SIGCHLD handler of the "
                + "program's own is kept, and called after RunLoopKit's).")
        }
        misuse("\(named) has a signal source, but its "
            + "disposition was changed behind RunLoopKit's back (\(now)): the source would never fire. Something "
            + "else in the process took the signal: signal(), sigaction(), or a DispatchSource signal source, as "
            + "swift-service-lifecycle's ServiceGroup makes for its gracefulShutdownSignals. Give the signal one "
            + "owner: with a ServiceGroup, let its graceful shutdown stop the loop (EVRunLoopService) instead of "
            + "a signal source.")
    }

    /// ``verify(_:in:)`` for every signal a source watches, in any loop.
    package static func verifyAll(in call: String) {
        withClaims { table in
            for signal in table.keys.sorted() where clibev_signal_disposition(signal) != 0 {
                check(signal, in: call, table: &table)
            }
        }
    }

    /// The usual name of `signal` (`SIGTERM`), or nil for one with none here.
    private static func name(_ signal: Int32) -> String? {
        let names: [Int32: String] = [
            SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2",
            SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM", SIGCHLD: "SIGCHLD", SIGCONT: "SIGCONT",
            SIGTSTP: "SIGTSTP", SIGTTIN: "SIGTTIN", SIGTTOU: "SIGTTOU", SIGURG: "SIGURG", SIGWINCH: "SIGWINCH",
            SIGIO: "SIGIO", SIGPROF: "SIGPROF", SIGVTALRM: "SIGVTALRM", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ",
        ]
        return names[signal]
    }

    /// Records that a watch of `signal` stopped; after the last one, restores the
    /// disposition the signal had before the first (for `SIGCHLD`, the one last taken back;
    /// one installed over the fan-out since then stays).
    package static func release(_ signal: Int32) {
        withClaims { table in
            guard var claim = table[signal] else { return }
            claim.watchers -= 1
            guard claim.watchers == 0 else {
                table[signal] = claim
                return
            }
            table[signal] = nil
            // SIGCHLD with another disposition installed over the fan-out since the last check
            // (GLib's child watch, the program's handler) keeps it: that is what a take-back
            // just before this release would have made the one to restore; putting back the
            // one before would silently drop the newcomer.
            if signal != SIGCHLD || clibev_signal_disposition(signal) == 0 {
                var previous = claim.previous
                sigaction(signal, &previous, nil)
            }
            // A restored handler that chains calls the fan-out: it must not be called back.
            clibev_signal_unchain(signal)
        }
    }

    /// Unblocks `signal` in the calling thread's signal mask (`pthread_sigmask`): a thread
    /// inherits its creator's mask, and a signal blocked in every thread never arrives.
    package static func unblock(_ signal: Int32) { _ = clibev_unblock_signal(signal) }
}
