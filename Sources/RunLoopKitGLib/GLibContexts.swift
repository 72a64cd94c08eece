import RunLoopKit
import Synchronization

/// Which contexts a loop of this process hosts, and which loops are attached to a context:
/// a context is hosted once, a loop attached once, and a context a loop attaches to is not
/// one a loop hosts (each would run the other inside itself).
enum GLibContexts {
    /// What a context or a loop is busy with, keyed by address. Taken by every host, unhost,
    /// attach and detach: a forked child whose copy a thread of the parent held at the fork
    /// refuses to take it (`ForkCheckedLock`).
    private static let uses = ForkCheckedLock<Uses>(
        Uses(), name: "RunLoopKitGLib's record of the hosted GMainContexts and attached loops")

#if DEBUG
    /// Called, when a test set it, while ``claimHost(_:call:)`` holds ``uses``: a test holds
    /// the lock open at a fork with it.
    static let claimHostHoldingUsesHookForTests = Mutex<(@Sendable () -> Void)?>(nil)
#endif

    private struct Uses: ~Copyable {
        /// Hosted contexts.
        var hosted: Set<UInt> = []
        /// Attached loops, by loop, with the context each is attached to.
        var attached: [ObjectIdentifier: UInt] = [:]
    }

    /// Records that `context` is hosted; stops with a message naming `call` when it already
    /// is, or when a loop is attached to it.
    static func claimHost(_ context: UInt, call: String) {
        let refusal: String? = uses.withLock { uses in
#if DEBUG
            if let hook = claimHostHoldingUsesHookForTests.withLock({ $0 }) { hook() }
#endif
            if uses.hosted.contains(context) {
                return "the GMainContext 0x\(String(context, radix: 16)) is hosted already; unhost it first"
            }
            if uses.attached.values.contains(context) {
                return "a loop is attached to the GMainContext 0x\(String(context, radix: 16)); a context that runs a loop cannot be run by it"
            }
            uses.hosted.insert(context)
            return nil
        }
        if let refusal { misuse("\(call): \(refusal)") }
    }

    /// Forgets a hosted context.
    static func releaseHost(_ context: UInt) {
        uses.withLock { _ = $0.hosted.remove(context) }
    }

    /// Records that `loop` is attached to `context`; stops with a message naming `call` when
    /// the loop is attached already, or when the context is hosted.
    static func claimAttachment(of loop: ObjectIdentifier, to context: UInt, call: String) {
        let refusal: String? = uses.withLock { uses in
            if let current = uses.attached[loop] {
                return "the loop is attached already (to the GMainContext 0x\(String(current, radix: 16))); detach it first"
            }
            if uses.hosted.contains(context) {
                return "the GMainContext 0x\(String(context, radix: 16)) is hosted by a loop; a context that runs a loop cannot be run by it"
            }
            uses.attached[loop] = context
            return nil
        }
        if let refusal { misuse("\(call): \(refusal)") }
    }

    /// Forgets a loop's attachment.
    static func releaseAttachment(of loop: ObjectIdentifier) {
        uses.withLock { _ = $0.attached.removeValue(forKey: loop) }
    }
}
