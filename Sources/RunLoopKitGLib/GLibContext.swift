internal import CRunLoopKitGLib
import Glibc

/// A `GMainContext` as this module drives it: GLib's own iteration (`g_main_context_iterate`
/// in gmain.c) cut at the wait, so that a run loop can do the waiting. With
/// `GLibSource.swift`, one of the two files that call GLib.
///
/// One iteration is ``prepare()`` (GLib's prepare and query: the descriptors to watch and
/// the timeout), the wait (the loop's), then ``check(readiness:)`` (the readiness of every
/// descriptor, from the hosting's epoll set or GLib's poll function with a zero timeout, and
/// GLib's check) and ``dispatch()``. The caller owns the context (`g_main_context_acquire`) for as long as
/// it iterates it. Loop thread only.
final class GLibContext {
    /// The context, referenced (`g_main_context_ref`) for this object's life.
    let pointer: OpaquePointer
    /// What `g_main_context_query` filled in, reused from one iteration to the next (GLib's
    /// `cached_poll_array`); `count` entries are valid.
    private var records: [GPollFD] = Array(repeating: GPollFD(), count: 8)
    private(set) var count = 0
    /// The priority `g_main_context_prepare` reported, for the check.
    private var maxPriority: Int32 = 0
    /// Whether a query is waiting for its check: a check without one is skipped.
    private(set) var isPrepared = false
    /// Counts queries: a reading of readiness (``check(readiness:)``) is for the query it
    /// was taken after.
    private(set) var queries = 0
    /// Whether a check found a descriptor ready since the hosting last cleared it: GLib
    /// signals its wakeup descriptor whenever its poll set changes (`g_main_context_add_poll`,
    /// `g_main_context_remove_poll`), so a set unchanged in its numbers may hold a new file.
    var sawReadiness = true

    /// The context `context` names, or GLib's global default context for nil (as GLib's
    /// functions read `NULL`).
    init(_ context: OpaquePointer?) {
        pointer = context ?? g_main_context_default()
        g_main_context_ref(pointer)
    }

    deinit { g_main_context_unref(pointer) }

    /// The address, for messages and for the registry of contexts in use.
    var address: UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer))) }

    /// `g_main_context_acquire`: makes the calling thread the context's owner (owners may
    /// nest); false when another thread owns it.
    func acquire() -> Bool { g_main_context_acquire(pointer) != 0 }

    /// `g_main_context_release`: undoes one ``acquire()``.
    func release() { g_main_context_release(pointer) }

    /// GLib's prepare and query: the descriptors now in ``descriptor(at:)`` and the timeout
    /// (milliseconds, rounded up by GLib; 0 when a source is ready, -1 for none).
    func prepare() -> Int32 {
        var priority: Int32 = 0
        g_main_context_prepare(pointer, &priority)
        maxPriority = priority
        var timeout: Int32 = -1
        while true {
            let needed = records.withUnsafeMutableBufferPointer { buffer in
                g_main_context_query(pointer, priority, &timeout, buffer.baseAddress, Int32(buffer.count))
            }
            if Int(needed) <= records.count {
                count = Int(needed)
                break
            }
            records = Array(repeating: GPollFD(), count: Int(needed))
        }
        queries &+= 1
        isPrepared = true
        return timeout
    }

    /// The descriptor of query record `index` and the conditions GLib waits for (`G_IO_IN`,
    /// `G_IO_OUT`, `G_IO_PRI`: poll(2)'s bits).
    func descriptor(at index: Int) -> (fd: Int32, events: Int16) {
        (records[index].fd, Int16(bitPattern: records[index].events))
    }

    /// Reads every queried descriptor's readiness, then GLib's check; true when a source is
    /// ready to dispatch. When the context polls with GLib's own `g_poll`
    /// (`g_main_context_set_poll_func` not called) and `watches` hold exactly this query's
    /// descriptors, their epoll set's reading stands in for the poll
    /// (``GLibWatches/fill(_:query:afterWait:)``; `afterWait`: the loop waited since the
    /// query); otherwise the context's poll function reads every descriptor with a zero
    /// timeout. Does nothing (false) without a ``prepare()`` since the last check.
    func check(readiness watches: GLibWatches? = nil, afterWait: Bool = false) -> Bool {
        guard isPrepared else { return false }
        isPrepared = false
        let poll = g_main_context_get_poll_func(pointer)
        return records.withUnsafeMutableBufferPointer { buffer in
            let queried = UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
            for index in queried.indices { queried[index].revents = 0 }
            var ready = 0
            if count > 0, let poll {
                if let watches, Self.isGLibPoll(poll), let filled = watches.fill(queried, query: queries, afterWait: afterWait) {
                    ready = filled
                } else {
                    ready = Int(poll(queried.baseAddress, UInt32(count), 0))
                }
            }
            if ready != 0 { sawReadiness = true }
            return g_main_context_check(pointer, maxPriority, queried.baseAddress, Int32(count)) != 0
        }
    }

    /// Whether `poll` is GLib's own `g_poll`, the default of every context.
    private static func isGLibPoll(_ poll: GPollFunc) -> Bool {
        unsafeBitCast(poll, to: UnsafeRawPointer.self) == unsafeBitCast(g_poll as GPollFunc, to: UnsafeRawPointer.self)
    }

    /// `g_main_context_dispatch`: runs the callbacks of the sources the last check found
    /// ready (none, if a nested iteration dispatched them meanwhile).
    func dispatch() { g_main_context_dispatch(pointer) }
}
