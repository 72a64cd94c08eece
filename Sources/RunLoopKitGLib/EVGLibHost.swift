import Glibc
import RunLoopKit

extension EVRunLoop {
    /// Runs GLib's `context` inside this loop, in `modes`: its timeouts, idles, descriptor
    /// watches and custom sources run whenever a run of one of those modes waits, with no
    /// polling and no thread of their own.
    ///
    /// Before each wait of a run in a hosted mode (the last `beforeWaiting` observer), GLib
    /// prepares and is queried: its descriptors become descriptor watches of the loop and its
    /// timeout a timer of the hosted modes, so the wait ends when GLib has work. After the
    /// wait (the first `afterWaiting` observer) GLib checks, and its ready sources are
    /// dispatched by a block at the end of the pass, after the loop's due timers and ready
    /// sources; so a GLib callback may run the loop again (a nested run), and GLib's own
    /// iteration nests inside it. A source ready before a wait (an idle that stays) is checked at
    /// once and dispatched in the next pass, which polls instead of waiting. A pass that
    /// follows one that did not wait (an idle source in the mode, a run with a zero timeout,
    /// the pass after one that fired a source) iterates GLib without waiting at its start
    /// (`beforeSources`), so GLib is served on every pass, waiting or not. A run of a mode
    /// that is not hosted runs none of GLib's sources, as UIKit's tracking mode keeps
    /// default-mode timers out.
    ///
    /// The loop acquires the context (`g_main_context_acquire`) until ``EVGLibHost/unhost()``:
    /// GLib's functions that require the context's owner work on this thread, and no other
    /// thread may iterate the context meanwhile.
    ///
    /// - Precondition: called on the loop's thread; the loop waits on the kernel (not an
    ///   `EVVirtualClock` loop); `modes` is not empty; the context is not owned by another
    ///   thread, not hosted already, and has no loop attached
    ///   (``attach(to:mode:priority:)``). Each stops the program with a message naming this call.
    ///
    /// - Parameters:
    ///   - context: a `GMainContext *`, or nil for GLib's global default context (the one
    ///     `g_timeout_add`, `g_idle_add` and `g_unix_fd_add` use).
    ///   - modes: where GLib runs; `.common` (the default) stands for every common mode.
    /// - Returns: the hosting, which lasts until its ``EVGLibHost/unhost()``.
    ///
    /// The corresponding GLib calls are those of one `g_main_context_iteration`:
    /// `g_main_context_prepare`, `g_main_context_query`, the poll, `g_main_context_check` and
    /// `g_main_context_dispatch`; GTK's macOS backend (`gdkeventloop-quartz.c`) maps them onto
    /// CFRunLoop's observers the same way.
    @discardableResult
    public func host(_ context: OpaquePointer? = nil, in modes: [Mode] = [.common]) -> EVGLibHost {
        let call = "EVRunLoop.host(_:in:)"
        require(isOwnerThread, "\(call): called off the loop's thread; a loop hosts GLib on its own thread")
        require(watchesKernelEvents, "\(call): an EVVirtualClock loop cannot host GLib: GLib's descriptors need the kernel")
        require(!modes.isEmpty, "\(call): modes is empty; GLib would never run")
        let glib = GLibContext(context)
        GLibContexts.claimHost(glib.address, call: call)
        guard glib.acquire() else {
            GLibContexts.releaseHost(glib.address)
            misuse("\(call): g_main_context_acquire failed: the GMainContext 0x\(String(glib.address, radix: 16)) is owned by another thread")
        }
        return EVGLibHost(loop: self, context: glib, modes: modes)
    }
}

/// GLib's `GMainContext` hosted in a run loop's modes
/// (``RunLoopKit/EVRunLoop/host(_:in:)``): GLib's sources run whenever a run of one of those
/// modes waits, until ``unhost()``.
///
/// The hosting keeps itself: the loop holds it until ``unhost()``, so the handle may be
/// dropped. Loop thread only; unhost before the loop's thread ends, since GLib records the
/// thread as the context's owner until the release.
///
/// GLib has no counterpart; the hosting plays the part of `g_main_loop_run`, iterating the
/// context with `g_main_context_prepare`, `g_main_context_query`, `g_main_context_check` and
/// `g_main_context_dispatch`.
public final class EVGLibHost {
    private let state: GLibHostState

    init(loop: EVRunLoop, context: GLibContext, modes: [EVRunLoop.Mode]) {
        state = GLibHostState(loop: loop, context: context, modes: modes)
    }

    /// Whether the loop still hosts the context.
    ///
    /// The corresponding GLib call is `g_main_loop_is_running` (and, for the ownership the
    /// hosting holds, `g_main_context_is_owner` on the loop's thread).
    public var isHosting: Bool { state.isHosting }

    /// The modes the context is hosted in.
    ///
    /// GLib has no counterpart: its loop runs every source of the context; its priorities
    /// (`g_source_set_priority`) order sources within an iteration instead.
    public var modes: [EVRunLoop.Mode] { state.modes }

    /// Stops running GLib's sources: removes the observers, the timer, the descriptor watches
    /// and the dispatching source and block from the loop, and releases the context
    /// (`g_main_context_release`; inside a GLib callback, once GLib's dispatch returns). GLib
    /// is left as it was before ``RunLoopKit/EVRunLoop/host(_:in:)``: its sources stay
    /// attached to the context, for whoever iterates it next. Calling it again does nothing.
    ///
    /// - Precondition: called on the loop's thread.
    ///
    /// The corresponding GLib call is `g_main_context_release` (and, for GLib's own loop,
    /// `g_main_loop_quit`).
    public func unhost() { state.unhost() }
}

/// The hosting's state and its callouts, all on the loop's thread.
///
/// The loop's observers, timer and source hold this object through their callouts, and it
/// names the loop weakly: the loop owns its hosting, not the reverse. ``unhost()`` lets go of
/// them, which ends the cycle.
final class GLibHostState {
    let context: GLibContext
    let modes: [EVRunLoop.Mode]
    private weak var loop: EVRunLoop?
    private(set) var isHosting = true
    /// How many GLib calls are on the stack (a callback may unhost, or run a nested pass).
    private var glibDepth = 0
    /// Whether the context still waits for its `g_main_context_release` (deferred while a
    /// GLib call is on the stack).
    private var releasePending = false
    /// Whether a check found sources ready whose dispatch has not run yet.
    private var dispatchPending = false

    // Set in `init`, let go of (nil) in `unhost()`.
    private var prepareObserver: EVObserver?
    private var checkObserver: EVObserver?
    /// Iterates GLib without waiting at the start of a pass that follows one that did not wait.
    private var pollObserver: EVObserver?
    /// Whether a wait (GLib's prepare) came since the last pass began: when not, the last
    /// pass polled, and GLib has not been served since.
    private var waitedSincePassBegan = false
    /// Ends the loop's wait at GLib's timeout: its date is set before each wait.
    private var timeoutTimer: EVTimer?
    /// Whether ``timeoutTimer`` is parked in the distant future.
    private var timeoutParked = true
    /// Runs `g_main_context_dispatch` in the next pass when an iteration started right after a
    /// dispatch found a source ready.
    private var dispatcher: EVSource?
    /// Runs `g_main_context_dispatch` as a block of the running mode, queued by the check
    /// after a wait: at the end of the same pass.
    private var dispatchBlock: (@Sendable () -> Void)?
    private let label: String
    /// The dispatching block's label, made once: the check queues the block every iteration.
    private let dispatchLabel: String
    /// The dispatching block's modes (the running mode), kept from the last iteration that
    /// ran in it: an iteration allocates no array.
    private var dispatchModes: [EVRunLoop.Mode] = []
    /// GLib's descriptors, watched by the loop.
    private let watches: GLibWatches

    init(loop: EVRunLoop, context: GLibContext, modes: [EVRunLoop.Mode]) {
        self.loop = loop
        self.context = context
        self.modes = modes
        let label = "GLib 0x\(String(context.address, radix: 16))"
        self.label = label
        dispatchLabel = "\(label) dispatch"
        watches = GLibWatches(modes: modes, label: label)
        // The last observer before the wait and the first after it: nothing else runs
        // between GLib's query and its check.
        prepareObserver = EVObserver(activities: .beforeWaiting, order: .max, label: "\(label) prepare") { _, _ in
            self.prepare()
        }
        checkObserver = EVObserver(activities: .afterWaiting, order: .min, label: "\(label) check") { _, _ in
            self.check()
        }
        pollObserver = EVObserver(activities: .beforeSources, order: .max, label: "\(label) poll") { _, _ in
            self.pollIfLastPassDidNotWait()
        }
        // Repeating, so that a fire does not invalidate it; every wait sets its date anew.
        // A microsecond's tolerance: GLib's timeout comes in whole milliseconds rounded up,
        // so its date is already as late as GLib's own poll() would wake, and any tolerance
        // under a millisecond wakes at that date; but a zero-tolerance deadline makes the
        // backend spin on the clock before it (up to 1% of the thread's time), which GLib's
        // own loop never pays (ARCHITECTURE.md, "GLib").
        timeoutTimer = EVTimer(interval: .seconds(Int64.max), repeats: true, tolerance: .microseconds(1),
                               label: "\(label) timeout") { _ in }
        dispatcher = EVSource(label: "\(label) dispatch", handler: EVRunLoop.isolated { (_: EVSource) in
            self.dispatch()
        })
        dispatchBlock = EVRunLoop.isolated { self.dispatch() }
        for mode in modes {
            loop.add(prepareObserver!, forMode: mode)
            loop.add(checkObserver!, forMode: mode)
            loop.add(pollObserver!, forMode: mode)
            loop.add(timeoutTimer!, forMode: mode)
            loop.add(dispatcher!, forMode: mode)
        }
    }

    /// Before the wait: GLib's prepare and query; its descriptors watched, its timeout the
    /// timer's date, a ready source (timeout 0) or an unwatchable descriptor a wake that
    /// ends the wait at once.
    private func prepare() {
        guard isHosting, let loop else { return }
        waitedSincePassBegan = true
        glibDepth += 1
        let timeout = context.prepare()
        glibDepth -= 1
        let allWatched = watches.update(from: context, on: loop)
        if timeout == 0 && allWatched {
            checkReadyAtOnce(on: loop)
        } else if timeout == 0 || !allWatched {
            loop.wakeUp()
            park()
        } else if timeout > 0 {
            timeoutTimer?.restart(afterNanoseconds: Int64(timeout) * 1_000_000)
            timeoutParked = false
        } else {
            park()
        }
    }

    /// Before the wait, when a source is ready already (an idle that stays, a timeout due,
    /// one a callback added): GLib's check at once, its ready sources dispatched by the
    /// manual source in the next pass, which then polls; the wait ends at once
    /// (`wakeUp()`), as GLib's own loop polls with a zero timeout. So a busy GLib costs one
    /// wake when it becomes busy, then one pass per iteration.
    private func checkReadyAtOnce(on loop: EVRunLoop) {
        glibDepth += 1
        let ready = context.check(readiness: watches)
        glibDepth -= 1
        if ready {
            dispatchPending = true
            dispatcher?.signal()
        }
        loop.wakeUp()
        park()
        finishUnhostIfDue()
    }

    /// At the start of a pass (`beforeSources`): when no wait came since the last pass began
    /// (it polled), one GLib iteration without waiting: prepare, query, the descriptors'
    /// readiness (the epoll set's, or GLib's poll with a zero timeout) and check; ready sources are dispatched by the manual source in this pass. As
    /// GTK's macOS backend does before CFRunLoop's sources, so that a loop that never waits
    /// (an idle source, zero-timeout runs) still runs GLib's timeouts and descriptors.
    private func pollIfLastPassDidNotWait() {
        let lastPassWaited = waitedSincePassBegan
        waitedSincePassBegan = false
        guard !lastPassWaited, isHosting, !dispatchPending, !context.isPrepared, let loop else { return }
        glibDepth += 1
        _ = context.prepare()
        _ = watches.update(from: context, on: loop)
        let ready = context.check(readiness: watches)
        glibDepth -= 1
        if ready {
            dispatchPending = true
            dispatcher?.signal()
        }
        finishUnhostIfDue()
    }

    private func park() {
        guard !timeoutParked else { return }
        timeoutTimer?.setFireInstant(.distantFuture)
        timeoutParked = true
    }

    /// After the wait: the descriptors' readiness (``GLibWatches/fill(_:query:afterWait:)``,
    /// no system call when the wait did not find their set readable) and GLib's check; ready
    /// sources are dispatched by a block of the running
    /// mode, at the end of this pass (after the loop's due timers and ready sources: a block,
    /// unlike the observer, may run the loop again and iterate GLib there).
    private func check() {
        guard isHosting, context.isPrepared, let loop else { return }
        glibDepth += 1
        let ready = context.check(readiness: watches, afterWait: true)
        glibDepth -= 1
        if ready, let mode = loop.currentMode, let dispatchBlock {
            dispatchPending = true
            if dispatchModes.first != mode { dispatchModes = [mode] }
            loop.perform(inModes: dispatchModes, label: dispatchLabel, dispatchBlock)
        }
        finishUnhostIfDue()
    }

    /// Dispatches what the check found ready. GLib's next iteration starts where the loop's
    /// next pass would wait, or at its start when this pass polled (a dispatch by the manual
    /// source): one `g_main_context_prepare` per iteration, as in GLib's own loop.
    private func dispatch() {
        guard isHosting else { return }
        dispatchPending = false
        glibDepth += 1
        context.dispatch()
        glibDepth -= 1
        finishUnhostIfDue()
    }

    func unhost() {
        guard isHosting else { return }
        if let loop {
            require(loop.isOwnerThread, "EVGLibHost.unhost(): called off the loop's thread; unhost on the thread that hosts")
        }
        isHosting = false
        prepareObserver?.invalidate()
        checkObserver?.invalidate()
        pollObserver?.invalidate()
        timeoutTimer?.invalidate()
        dispatcher?.invalidate()
        (prepareObserver, checkObserver, pollObserver) = (nil, nil, nil)
        (timeoutTimer, dispatcher, dispatchBlock) = (nil, nil, nil)
        watches.removeAll()
        releasePending = true
        finishUnhostIfDue()
    }

    /// Releases the context once no GLib call is on the stack. Sources a check found ready
    /// and no dispatch ran are handed back to GLib: a prepare drops GLib's list of pending
    /// dispatches (and the references it holds), as GLib's own next iteration would.
    private func finishUnhostIfDue() {
        guard releasePending, glibDepth == 0 else { return }
        releasePending = false
        if dispatchPending {
            dispatchPending = false
            _ = context.prepare()
        }
        context.release()
        GLibContexts.releaseHost(context.address)
    }
}
