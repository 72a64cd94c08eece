internal import CRunLoopKitLibev
import RunLoopKitPlatform

/// libdispatch's main queue, as CoreFoundation's run loop services it on Linux: an eventfd
/// that becomes readable when the queue has work, and the call that drains it.
package enum MainDispatchQueue {
    /// The main queue's eventfd (`_dispatch_get_main_queue_handle_4CF`), created on first use.
    package static var handle: Int32 { _dispatch_get_main_queue_handle_4CF() }

    /// Reads the eventfd (CF's `__CFRunLoopServiceFileDescriptors` acknowledging the
    /// wake-up); whether it had been written.
    package static func consumeWake(_ handle: Int32) -> Bool { KernelWakes.consumeEvent(handle) }

    /// Runs what the main queue holds (`_dispatch_main_queue_callback_4CF`). Main thread only.
    package static func drain() { _dispatch_main_queue_callback_4CF(nil) }
}
