import Glibc
import Synchronization

/// Which libev loop catches each POSIX signal, and what the signal's disposition was before.
///
/// libev lets a signal belong to one `ev_loop` at a time (a second one aborts inside libev)
/// and sets the disposition to `SIG_DFL` when the last watcher stops. This table refuses
/// the second loop with a message naming the signal, and restores the disposition the
/// signal had before the first watcher started (so an ignored signal stays ignored).
enum SignalClaims {
    private struct Claim {
        let loop: ObjectIdentifier
        var watchers: Int
        let previous: sigaction
    }

    // Safe to share: the `sigaction` values are plain data (handler addresses and flags).
    private struct Table: @unchecked Sendable {
        var claims: [Int32: Claim] = [:]
    }

    private static let table = Mutex(Table())

    /// Records one more watcher of `signal` for `loop`, before `ev_signal_start`. Stops the
    /// program with a message if another loop catches the signal.
    static func claim(_ signal: Int32, for loop: ObjectIdentifier) {
        let taken = table.withLock { table -> Bool in
            if var claim = table.claims[signal] {
                guard claim.loop == loop else { return true }
                claim.watchers += 1
                table.claims[signal] = claim
                return false
            }
            var previous = sigaction()
            sigaction(signal, nil, &previous)
            table.claims[signal] = Claim(loop: loop, watchers: 1, previous: previous)
            return false
        }
        require(!taken, "EVRunLoop.add(_:forMode:): signal \(signal) is already caught by another loop; "
            + "a signal can be watched by the sources of one loop only")
    }

    /// Records that a watcher of `signal` stopped (after `ev_signal_stop`); after the last
    /// one, restores the disposition the signal had before the first.
    static func release(_ signal: Int32, for loop: ObjectIdentifier) {
        table.withLock { table in
            guard var claim = table.claims[signal], claim.loop == loop else { return }
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
