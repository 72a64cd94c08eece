import RunLoopKitBackend
/// libdispatch's main queue on the main loop: what CFRunLoop's `__CFRunLoopRun` does with its
/// `dispatchPort` on Linux, step for step.
///
/// - A run of ``EVRunLoop/main`` in one of its common modes services the queue, unless it is
///   nested inside a main-queue callout (CF's `libdispatchQSafe`, kept in the thread-specific
///   `__CFTSDKeyIsInGCDMainQ`): a nested run never drains the queue re-entrantly.
/// - While such a run waits, the queue's eventfd is watched; after the wait (never inside a
///   libev callback) the eventfd is read and `_dispatch_main_queue_callback_4CF` runs the
///   queued work. That counts as a handled source.
/// - Fairness: a pass that did not service the queue on the previous pass checks the
///   eventfd before it would sleep, and if it was written skips the wait (and the
///   `beforeWaiting`/`afterWaiting` notifications) to service the queue at once. CF reads
///   the eventfd; here a poll of every watch checks it, and the readiness it collects
///   serves as the pass's wait, which then needs no system call of its own when the poll
///   found anything (a descriptor stays ready; a wake it consumed ends the wait at once):
///   a busy loop makes one system call per pass where it made two.
/// - Such a mode is never empty: ``EVRunLoop/run(mode:for:returnAfterSourceHandled:)`` keeps
///   going until its deadline or a stop, as CF's `__CFRunLoopModeIsEmpty` says.
/// - When libdispatch gives no eventfd for the queue (its main queue is no runloop queue:
///   after `dispatchMain()`, and so in a forked child of a program in it, whose forking
///   thread is the child's main thread), no run services it.
extension LoopEngine {
    /// The libdispatch main-queue state of the main loop. Loop thread only.
    struct MainQueueState {
        /// The queue's eventfd, asked of libdispatch by the first run that would service the
        /// queue; -1 before, and when libdispatch has none (its main queue is no runloop
        /// queue: after `dispatchMain()`, as in a forked child of a program in it).
        var handle: Int32 = -1
        /// Whether ``handle`` was asked for.
        var isResolved = false
        /// The eventfd's token in the backend's wait set; -1 while it is not in it.
        var token = -1
        /// Set by the backend when the eventfd became readable during a wait.
        var isReady = false
        /// Whether `_dispatch_main_queue_callback_4CF` is on the stack.
        var isDraining = false
    }

    /// CF's `dispatchPort` of one run: whether the run services the queue, and CF's
    /// `didDispatchPortLastTime`.
    struct MainQueuePort {
        let isServiced: Bool
        var servicedLastPass = true
    }

    /// Whether a run of `mode` services the main queue now (CF's `libdispatchQSafe`, loop
    /// is the main loop, mode is common), and libdispatch gives the queue's eventfd.
    func servesMainQueue(_ mode: Mode) -> Bool {
        guard isMainLoop && !mainQueue.isDraining && commonModeSet.contains(mode) else { return false }
        if !mainQueue.isResolved {
            mainQueue.handle = MainDispatchQueue.handle
            mainQueue.isResolved = true
        }
        return mainQueue.handle >= 0
    }

    /// The port of a run of `mode` that starts now.
    func mainQueuePort(for mode: Mode) -> MainQueuePort {
        MainQueuePort(isServiced: servesMainQueue(mode))
    }

    /// What the fairness check before the wait found.
    enum MainQueueCheck {
        /// No check this pass (or not a servicing run): wait as usual.
        case none
        /// The check polled every watch and the queue had nothing: the pass's wait need
        /// not poll again, nor wait at all when the poll collected an event.
        case polled
        /// The queue had work waiting: service it now, without waiting.
        case serviceNow
    }

    /// Before the wait: puts the eventfd in the wait set of a servicing run (takes it out
    /// for a nested run that does not service the queue), and applies CF's fairness rule.
    func mainQueueBeforeWaiting(_ port: inout MainQueuePort) -> MainQueueCheck {
        if port.isServiced != (mainQueue.token >= 0) {
            if port.isServiced {
                mainQueue.token = watches.claim(nil)
                backend.watch(.descriptor(mainQueue.handle, interest: .read), token: mainQueue.token)
            } else {
                backend.unwatch(mainQueue.token)
                watches.release(mainQueue.token)
                mainQueue.token = -1
            }
        }
        defer { port.servicedLastPass = false }
        guard port.isServiced && !port.servicedLastPass else { return .none }
        backend.wait(.poll, events: self)
        guard mainQueue.isReady, MainDispatchQueue.consumeWake(mainQueue.handle) else { return .polled }
        return .serviceNow
    }

    /// After the wait: services the queue if its eventfd was written (or was found
    /// written before the wait, `polled`). Returns whether it did: a handled source.
    func serviceMainQueue(_ port: inout MainQueuePort, polled: Bool) -> Bool {
        let ready = mainQueue.isReady
        mainQueue.isReady = false
        guard port.isServiced,
              polled || (ready && MainDispatchQueue.consumeWake(mainQueue.handle)) else { return false }
        port.servicedLastPass = true
        stats.mainQueueDrains += 1
        let mark = beginCallout(.mainQueue)
        mainQueue.isDraining = true
        MainDispatchQueue.drain()
        mainQueue.isDraining = false
        endCallout(mark)
        return true
    }
}
