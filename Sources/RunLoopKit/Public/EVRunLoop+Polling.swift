import RunLoopKitPlatform

/// Driving a loop from another loop: a descriptor to poll, a deadline, and a pass in two
/// halves around the other loop's wait.
extension EVRunLoop {
    /// How long the loop that drives this one may sleep before the next
    /// ``EVRunLoop/dispatchPolledPass()``, besides until ``EVRunLoop/pollDescriptor`` is
    /// readable: what ``EVRunLoop/preparePolledPass(mode:until:returnAfterSourceHandled:)`` returns.
    ///
    /// The corresponding sd-event value is the timeout `sd_event_prepare` leaves to
    /// `sd_event_wait`; libuv's is `uv_backend_timeout`, GLib's the timeout
    /// `g_main_context_query` returns.
    public enum PollDeadline: Sendable, Hashable, CustomStringConvertible {
        /// Work is pending already (a block queued on the loop's thread, a source that fired,
        /// readiness collected): poll without sleeping, then dispatch.
        case now
        /// Sleep until the descriptor is readable or until this instant of the loop's
        /// monotonic clock (``EVRunLoop/now``). The descriptor also becomes readable at the
        /// instant, to the nanosecond, so a loop whose timeouts are coarser loses nothing.
        case at(Instant)
        /// Sleep until the descriptor is readable: no timer and no run deadline.
        case never

        /// The deadline as a `poll(2)` or `epoll_wait(2)` timeout in milliseconds from `now`:
        /// 0 for ``now`` or an instant already past, the milliseconds to the instant rounded
        /// up (so a timeout never ends before it), at most `Int32.max`, and -1 for ``never``.
        ///
        /// - Parameter now: the loop's clock now, ``EVRunLoop/now``.
        /// - Returns: the timeout in milliseconds.
        ///
        /// libuv's `uv_backend_timeout` answers in these units; GLib's prepare takes the same.
        public func milliseconds(from now: Instant) -> Int32 {
            switch self {
            case .now: return 0
            case .never: return -1
            case .at(let instant):
                let nanos = instant.nanoseconds.saturatingSubtract(now.nanoseconds)
                guard nanos > 0 else { return 0 }
                return Int32(clamping: nanos / 1_000_000 + (nanos % 1_000_000 == 0 ? 0 : 1))
            }
        }

        public var description: String {
            switch self {
            case .now: "now"
            case .at(let instant): "at(\(instant))"
            case .never: "never"
            }
        }
    }

    /// A descriptor that becomes readable whenever the loop has work for the pass being
    /// polled: a timer due (at the deadline ``preparePolledPass(mode:until:returnAfterSourceHandled:)`` returned), a
    /// descriptor or signal source ready, a ``wakeUp()`` (so a ``stop()``, a
    /// ``perform(inModes:label:_:)`` or an add from another thread), libdispatch's main queue
    /// for ``main``. Poll it for reading, level-triggered; never read, close or change it.
    /// The same descriptor for the loop's life, in a forked child too: there the number
    /// names the child's own epoll instance once the loop adopts the child, at its first
    /// prepare, dispatch or run (libev's `ev_loop_fork`). Safe from any thread.
    ///
    /// It is libev's backend descriptor (its epoll instance), which holds every descriptor
    /// the loop watches: the timerfd armed at the pass's deadline, the eventfd of wakes and
    /// caught signals, the sources' descriptors. A loop on a virtual clock has none: asking
    /// stops the program with a message. It is for another loop: a descriptor source of this
    /// loop on it (the loop waiting on itself, which epoll refuses) stops the program with a
    /// message too, at ``add(_:forMode:)-(EVSource,_)``.
    ///
    /// A loop driven from a `poll()` loop until its mode has nothing left:
    ///
    /// ```swift
    /// let loop = EVRunLoop.current
    /// loop.add(EVTimer(interval: 0.1, repeats: false) { _ in print("fired") }, forMode: .default)
    /// var watch = pollfd(fd: loop.pollDescriptor, events: Int16(POLLIN), revents: 0)
    /// var result: EVRunLoop.RunResult?
    /// while result == nil {
    ///     let deadline = loop.preparePolledPass(mode: .default)
    ///     _ = poll(&watch, 1, deadline.milliseconds(from: loop.now))  // the other loop's wait
    ///     result = loop.dispatchPolledPass()
    /// }
    /// ```
    ///
    /// The corresponding sd-event call is `sd_event_get_fd`; libuv's is `uv_backend_fd`, and
    /// libev hands out the same descriptor through `ev_embed`. CFRunLoop has none.
    public var pollDescriptor: Int32 {
        guard let descriptor = backend.pollDescriptor else {
            misuse("EVRunLoop.pollDescriptor: a loop on a virtual clock has no descriptor; only a libev loop can be driven by another loop")
        }
        return descriptor
    }

    /// Readies a pass of `mode` for a wait that another loop does, and returns how long that
    /// loop may sleep: poll ``pollDescriptor`` for reading with this deadline (the
    /// ``PollDeadline/milliseconds(from:)`` of it), then call ``dispatchPolledPass()``.
    ///
    /// The first call opens a run of `mode`, as ``run(mode:until:returnAfterSourceHandled:)-(_,Date,_)``
    /// would (`entry`); each pass's first call runs the first half of the pass, up to and
    /// including `beforeWaiting`: `beforeTimers`, `beforeSources`, blocks, signalled manual
    /// sources. Calling it again before the dispatch only plans the wait again (GLib calls
    /// prepare on every iteration): a block performed on the loop's thread meanwhile, or a
    /// timer added, is in the new answer. While the run is open the loop counts as running
    /// `mode`: ``currentMode`` is `mode`, and ``EVRunLoop/current`` on this thread is this loop.
    /// A mode with nothing to run opens no run (``currentMode`` stays nil) and returns
    /// ``PollDeadline/never``; a wake from
    /// another thread (an add, a perform) makes the descriptor readable, and the next call
    /// opens the run. Loop thread only, outside the loop's own runs.
    ///
    /// - Parameters:
    ///   - mode: the mode to run; the same on every call until the run ends.
    ///   - deadline: when a run this call opens times out (``RunResult/timedOut``), on the
    ///     loop's monotonic clock; ignored while a run is open.
    ///   - returnAfterSourceHandled: whether a run this call opens ends after the first pass
    ///     in which a source fired (``RunResult/handledSource``).
    /// - Returns: the deadline of the other loop's wait.
    ///
    /// The corresponding sd-event call is `sd_event_prepare` (its `sd_event_wait` is the
    /// other loop's poll); libuv's `uv_backend_timeout`; GLib's `g_main_context_prepare` and
    /// `g_main_context_query`. CFRunLoop has none: this is the top half of `__CFRunLoopRun`'s
    /// pass.
    public func preparePolledPass(
        mode: Mode = .default, until deadline: Instant = .distantFuture, returnAfterSourceHandled: Bool = false
    ) -> PollDeadline {
        let call = "preparePolledPass(mode:until:returnAfterSourceHandled:)"
        checkOwner(call)
        return engine.preparePolledPass(mode: mode, until: deadline, stopAfterSource: returnAfterSourceHandled, call: call)
    }

    /// Runs the rest of the pass after the other loop's wait: collects what made
    /// ``pollDescriptor`` readable (or takes the deadline as passed), then `afterWaiting`, due
    /// timers, the main queue, ready descriptor and signal sources, blocks, in CF's order.
    /// Call it after the poll, whether the descriptor was readable or the poll timed out; a
    /// call with no pass prepared does nothing.
    ///
    /// - Returns: why the run ended, when it ended in this pass (``RunResult/stopped`` after a
    ///   ``stop()``, ``RunResult/finished`` when the mode has nothing left,
    ///   ``RunResult/timedOut`` at the run's deadline, ``RunResult/handledSource`` when asked),
    ///   after `exit`; nil while it goes on.
    ///   The next ``preparePolledPass(mode:until:returnAfterSourceHandled:)`` opens a new run.
    ///
    /// The corresponding sd-event call is `sd_event_dispatch`; libuv's is
    /// `uv_run(loop, UV_RUN_NOWAIT)`, GLib's `g_main_context_check` and `dispatch`. CFRunLoop
    /// has none: this is the bottom half of `__CFRunLoopRun`'s pass.
    @discardableResult
    public func dispatchPolledPass() -> RunResult? {
        let call = "dispatchPolledPass()"
        checkOwner(call)
        return engine.dispatchPolledPass(call: call)
    }

    /// Ends the polled run, if one is open (`exit`), for a loop that stops driving this one.
    /// Its timers, sources and observers stay; a later ``preparePolledPass(mode:until:returnAfterSourceHandled:)``
    /// opens a new run. Loop thread only.
    ///
    /// The corresponding GLib call is `g_source_destroy` of the source that drove the loop;
    /// sd-event and libuv need none (their iteration keeps no state between calls).
    public func endPolledRun() {
        let call = "endPolledRun()"
        checkOwner(call)
        engine.endPolledRun(call: call)
    }
}
