import RunLoopKit

extension EVRunLoop {
    /// Lets GLib's `context` drive this loop: the loop becomes a `GSource` of the context,
    /// so while GLib iterates it (`g_main_loop_run`, `g_application_run`,
    /// `gtk_main`), the loop runs `mode`: its timers (with tolerance, aligned, frame timers),
    /// sources, observers and blocks, and — for `EVRunLoop.main` in a common mode —
    /// libdispatch's main queue, so `DispatchQueue.main`, `@MainActor` tasks and
    /// `MainActor.run` run on the main thread. No polling, and no idle callback: GLib sleeps
    /// until the loop has work.
    ///
    /// The source polls the loop's `pollDescriptor` for reading and takes its
    /// prepare timeout from `preparePolledPass(mode:until:returnAfterSourceHandled:)`;
    /// each dispatch is one pass (`dispatchPolledPass()`), in CF's order. A run
    /// that ends (a `stop()`, or a mode with nothing left) is opened again at
    /// GLib's next iteration. A RunLoopKit callout that runs GLib's loop again (a modal
    /// dialog's `g_main_loop_run`) runs no RunLoopKit work meanwhile: the source sits out
    /// GLib's iterations nested in its own dispatch, its descriptor out of their poll; so
    /// does a GLib iteration inside one of the loop's own runs (not the polled one).
    ///
    /// The loop acquires the context (`g_main_context_acquire`) until
    /// ``EVGLibAttachment/detach()``, so no other thread can iterate it meanwhile.
    ///
    /// - Precondition: called on the loop's thread, outside the loop's runs; the loop waits
    ///   on the kernel (not an `EVVirtualClock` loop) and is not attached already; the
    ///   context is not owned by another thread and not hosted by a loop
    ///   (``host(_:in:)``). Each stops the program with a message naming this call.
    ///
    /// - Parameters:
    ///   - context: a `GMainContext *`, or nil for GLib's global default context (the one
    ///     GTK and `g_main_loop_new(NULL, …)` use).
    ///   - mode: the mode GLib runs; `.default` unless the app needs another.
    ///   - priority: the source's GLib priority (`G_PRIORITY_DEFAULT`, 0, unless given):
    ///     GTK's events are dispatched at the same priority, its redraws after.
    /// - Returns: the attachment, which lasts until its ``EVGLibAttachment/detach()``.
    ///
    /// The corresponding GLib calls are `g_source_new` with a `GSourceFuncs` of this loop,
    /// `g_source_add_unix_fd` and `g_source_attach`; GTK's macOS backend
    /// (`gdkeventloop-quartz.c`) attaches CFRunLoop to GLib with such a source.
    @discardableResult
    public func attach(to context: OpaquePointer? = nil, mode: Mode = .default, priority: Int32 = 0) -> EVGLibAttachment {
        let call = "EVRunLoop.attach(to:mode:priority:)"
        require(isOwnerThread, "\(call): called off the loop's thread; a loop is attached on its own thread")
        require(watchesKernelEvents, "\(call): an EVVirtualClock loop has no descriptor for GLib to poll")
        require(mode != .common, "\(call): .common is not a mode that can run; attach a concrete mode")
        let glib = GLibContext(context)
        GLibContexts.claimAttachment(of: ObjectIdentifier(self), to: glib.address, call: call)
        guard glib.acquire() else {
            GLibContexts.releaseAttachment(of: ObjectIdentifier(self))
            misuse("\(call): g_main_context_acquire failed: the GMainContext 0x\(String(glib.address, radix: 16)) is owned by another thread")
        }
        return EVGLibAttachment(state: GLibAttachmentState(loop: self, context: glib, mode: mode, priority: priority))
    }
}

/// A run loop attached to a `GMainContext` as a `GSource` (``RunLoopKit/EVRunLoop/attach(to:mode:priority:)``):
/// while GLib iterates the context, the loop runs, until ``detach()``.
///
/// The attachment keeps itself: the context holds the source until ``detach()``, so the
/// handle may be dropped. Loop thread only; detach before the loop's thread ends, since GLib
/// records the thread as the context's owner until the release.
///
/// The corresponding GLib object is the `GSource`; ``detach()`` is `g_source_destroy`.
public final class EVGLibAttachment {
    private let state: GLibAttachmentState

    init(state: GLibAttachmentState) { self.state = state }

    /// Whether the loop is still attached.
    ///
    /// The corresponding GLib call is `g_source_is_destroyed` (negated).
    public var isAttached: Bool { state.isAttached }

    /// The mode GLib runs.
    ///
    /// GLib has no counterpart: its sources have priorities (`g_source_get_priority`), not
    /// modes.
    public var mode: EVRunLoop.Mode { state.mode }

    /// Stops GLib from running the loop: destroys the source (`g_source_destroy`), ends the
    /// loop's polled run (`endPolledRun()`; inside a RunLoopKit callout, once the
    /// pass returns) and releases the context (`g_main_context_release`). The loop's timers,
    /// sources and observers stay, for its next run. Calling it again does nothing.
    ///
    /// - Precondition: called on the loop's thread.
    ///
    /// The corresponding GLib call is `g_source_destroy`.
    public func detach() { state.detach() }
}

/// The attachment's state, and the stages of its `GSource`; loop thread only.
///
/// The `GSource` holds this object until GLib finalizes the source; this object holds the
/// source until ``detach()``, which ends the cycle.
final class GLibAttachmentState: GLibSourceStages {
    let loop: EVRunLoop
    let mode: EVRunLoop.Mode
    private let context: GLibContext
    private var source: GLibSource?
    private(set) var isAttached = true
    /// The last prepare's answer, for the check.
    private var deadline: EVRunLoop.PollDeadline = .never
    /// Whether the loop's polled run is open (a prepare opened it, no dispatch ended it).
    private var runOpen = false
    /// Whether the last prepare left the loop alone: GLib iterated inside one of the loop's
    /// own runs (a callout that runs GLib's loop while the program runs RunLoopKit's).
    private var skipped = false
    /// Whether a pass is being dispatched (a callout may detach).
    private var isDispatching = false

    init(loop: EVRunLoop, context: GLibContext, mode: EVRunLoop.Mode, priority: Int32) {
        self.loop = loop
        self.context = context
        self.mode = mode
        let source = GLibSource(stages: self, name: "RunLoopKit \(mode)", priority: priority)
        source.pollForReading(loop.pollDescriptor)
        source.attach(to: context)
        self.source = source
    }

    private func checkThread(_ stage: String) {
        require(loop.isOwnerThread,
                "EVRunLoop.attach(to:mode:priority:): GLib ran the loop's source (\(stage)) on another thread; iterate the GMainContext on the loop's thread")
    }

    func prepare() -> Int32 {
        checkThread("prepare")
        // GLib iterates inside the pass (a callout runs g_main_loop_run; the source may
        // recurse, GLibSource), or inside one of the loop's own runs: the loop is left alone,
        // and its descriptor kept out of this poll, or a readable one would make GLib spin
        // until the callout returns.
        skipped = isDispatching || !isAttached || (!runOpen && loop.currentMode != nil)
        if skipped {
            source?.pausePolling()
            return -1
        }
        source?.resumePolling()
        deadline = loop.preparePolledPass(mode: mode)
        runOpen = loop.currentMode != nil
        return deadline.milliseconds(from: loop.now)
    }

    func check(readable: Bool) -> Bool {
        checkThread("check")
        guard !skipped else { return false }
        if readable { return true }
        switch deadline {
        case .now: return true
        case .at(let instant): return loop.now >= instant
        case .never: return false
        }
    }

    func dispatch() {
        checkThread("dispatch")
        guard isAttached else { return }
        isDispatching = true
        if loop.dispatchPolledPass() != nil { runOpen = false }
        isDispatching = false
        source?.resumePolling()
        if !isAttached { finishDetach() }
    }

    func detach() {
        guard isAttached else { return }
        require(loop.isOwnerThread, "EVGLibAttachment.detach(): called off the loop's thread; detach on the thread that attached")
        isAttached = false
        source?.destroy()
        source = nil
        if !isDispatching { finishDetach() }
    }

    private func finishDetach() {
        if runOpen { loop.endPolledRun() }
        runOpen = false
        context.release()
        GLibContexts.releaseAttachment(of: ObjectIdentifier(loop))
    }
}
