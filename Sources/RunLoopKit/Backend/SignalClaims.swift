internal import CRunLoopKitLibev
import Glibc
import Synchronization

/// Which POSIX signals the loops' signal sources catch, and what each signal's disposition
/// was before.
///
/// A signal is caught once for the whole process, by the C shim's handler, which hands each
/// arrival to every loop watching the signal (as sd-event and GLib deliver to every watcher;
/// libev's `ev_signal` would bind the signal to one loop). The first watch of a signal in any
/// loop records its disposition and installs the handler; the last one to stop restores the
/// disposition (so an ignored signal is ignored again).
enum SignalClaims {
    private struct Claim {
        var watchers: Int
        let previous: sigaction
    }

    // Safe to share: the `sigaction` values are plain data (handler addresses and flags).
    private struct Table: @unchecked Sendable {
        var claims: [Int32: Claim] = [:]
    }

    private static let table = Mutex(Table())

    /// Records one more watch of `signal`, in any loop; the first installs the handler.
    static func claim(_ signal: Int32) {
        table.withLock { table in
            if var claim = table.claims[signal] {
                claim.watchers += 1
                table.claims[signal] = claim
                return
            }
            var previous = sigaction()
            sigaction(signal, nil, &previous)
            if clibev_signal_catch(signal) != 0 {
                let code = Glibc.errno
                misuse("EVRunLoop.add(_:forMode:): cannot catch signal \(signal): \(EVRunLoop.Error(call: "sigaction", errno: code))")
            }
            table.claims[signal] = Claim(watchers: 1, previous: previous)
        }
    }

    /// Records that a watch of `signal` stopped; after the last one, restores the
    /// disposition the signal had before the first.
    static func release(_ signal: Int32) {
        table.withLock { table in
            guard var claim = table.claims[signal] else { return }
            claim.watchers -= 1
            guard claim.watchers == 0 else {
                table.claims[signal] = claim
                return
            }
            table.claims[signal] = nil
            var previous = claim.previous
            sigaction(signal, &previous, nil)
        }
    }
}
