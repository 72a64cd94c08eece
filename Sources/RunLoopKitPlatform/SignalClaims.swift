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
package enum SignalClaims {
    private struct Claim {
        var watchers: Int
        let previous: sigaction
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
            if var claim = table[signal] {
                claim.watchers += 1
                table[signal] = claim
                return
            }
            var previous = sigaction()
            sigaction(signal, nil, &previous)
            if clibev_signal_catch(signal) != 0 {
                let code = errno
                misuse("EVRunLoop.add(_:forMode:): cannot catch signal \(signal): \(SystemCallError(call: "sigaction", errno: code))")
            }
            table[signal] = Claim(watchers: 1, previous: previous)
        }
    }

    /// Records that a watch of `signal` stopped; after the last one, restores the
    /// disposition the signal had before the first.
    package static func release(_ signal: Int32) {
        withClaims { table in
            guard var claim = table[signal] else { return }
            claim.watchers -= 1
            guard claim.watchers == 0 else {
                table[signal] = claim
                return
            }
            table[signal] = nil
            var previous = claim.previous
            sigaction(signal, &previous, nil)
        }
    }

    /// Unblocks `signal` in the calling thread's signal mask (`pthread_sigmask`): a thread
    /// inherits its creator's mask, and a signal blocked in every thread never arrives.
    package static func unblock(_ signal: Int32) { _ = clibev_unblock_signal(signal) }
}
