import Glibc
import RunLoopKitPlatform

/// Instants shared by every RunLoopKit loop on a machine, where tolerant wakes meet.
///
/// A backend's placement (called by ``LibevBackend`` and ``VirtualBackend`` only): it reads a
/// ``WakeWindow`` and answers an instant.
///
/// Each loop's greedy rule (the timer queue's ``WakeWindow``) wakes as seldom as the loop's own timers
/// allow, but two loops, or two processes, each waking 10 times a second still wake the CPU
/// 20 times. With the grid, a loop whose wake window allows it wakes on a grid point instead,
/// and loops whose windows overlap pick the same points without talking to each other.
///
/// The grid has one step per round tolerance (1 min, 10 s, 1 s, 250 ms, 100 ms, 50 ms,
/// 25 ms); each step is 15/16 of that tolerance, in whole milliseconds, so that a window as
/// long as the tolerance still holds one point after the backend's reserve (the libev
/// backend wakes 1 ms plus twice its measured oversleep before the window ends; 1/16 of
/// 100 ms is 6.25 ms). Every grid is offset by one phase, in whole milliseconds, drawn from
/// the boot id (`/proc/sys/kernel/random/boot_id`): every process on the machine computes
/// the same one (`CLOCK_MONOTONIC` starts at boot for all of them), other machines do not.
///
/// Placement, given a window (``WakeWindow``) and the backend's reserve (the part of the
/// window to leave before ``WakeWindow/latest``):
/// 1. *Neutral*: coarse to fine, the first step whose latest point at or before
///    `latest - reserve` is at or after ``WakeWindow/served``: that point. A wake there fires
///    exactly the timers the greedy wake fires, so the loop's wake count is unchanged.
/// 2. *Lock-step*: otherwise, the step that fits the usable window
///    (`latest - reserve - first`) and fills at least 9/10 of it, if any (steps are at least
///    twice apart, so at most one does): its latest point in the window. Timers due after
///    that point wait for the next wake, which a dense stream of timers (many timers of one
///    tolerance) places one step later: the loop wakes once per step, at most 10/9 of its
///    greedy count, and in step with every other such loop.
///
/// The reserve counted is at most 1/16 of the window (`latest - first`), the part the steps
/// leave for it. The libev backend's reserve grows with its measured oversleep, and loops
/// woken together on a grid point lengthen each other's (eight processes on two cores run
/// one after another): past 1/16 the lock-step point would no longer fit, the loops would
/// fall back to their own instants and wake apart, which is the load the grid is there to
/// spare. A loop woken later than that is late past some tolerance with or without the grid.
///
/// When neither gives a point, the backend keeps its per-loop placement. This follows
/// systemd's sd-event (`sleep_between`: the latest point in the window of a per-boot grid of
/// 1 min, 10 s, 1 s, then 250 ms, else the window's end), which has no reserve and does not
/// bound its wake count.
///
/// There is no CFRunLoop counterpart: Apple's kernel coalesces timers across processes by
/// itself.
struct WakeGrid: Sendable, Equatable {
    /// The offset of every step's points from the clock's origin, in nanoseconds: the points
    /// of a step lie at `phase + k × step`.
    let phase: Int64

    /// The steps, coarse to fine, in nanoseconds: 15/16 of each round tolerance, floored to
    /// whole milliseconds (56 250, 9 375, 937, 234, 93, 46 and 23 ms).
    static let steps: [Int64] = [60_000, 10_000, 1_000, 250, 100, 50, 25].map { ms in ms * 15 / 16 * 1_000_000 }

    /// A grid whose points are offset by `phase` nanoseconds.
    init(phase: Int64) { self.phase = phase }

    /// The grid shared by every real loop on this machine, its phase from the boot id (zero
    /// when the boot id cannot be read: loops of one process still agree).
    static let machine = WakeGrid(phase: readBootID().flatMap(phase(bootID:)) ?? 0)

    /// The phase a boot id gives: the two 64-bit halves of the id XORed (as sd-event does),
    /// reduced to whole milliseconds within the coarsest step; nil unless `bootID` holds 32
    /// hexadecimal digits.
    static func phase(bootID: String) -> Int64? {
        let digits = bootID.filter(\.isHexDigit)
        guard digits.count == 32,
              let high = UInt64(digits.prefix(16), radix: 16),
              let low = UInt64(digits.suffix(16), radix: 16) else { return nil }
        let millis = (high ^ low) % UInt64(steps[0] / 1_000_000)
        return Int64(millis) * 1_000_000
    }

    /// Where to wake in `window`: a grid point at or after ``WakeWindow/first`` and at or
    /// before `latest - min(reserve, (latest - first) / 16)` (ns), or nil when the window allows
    /// none (see the type's comment for the rule). `reserve` (ns) is at least zero.
    func place(_ window: WakeWindow, reserve: Int64) -> Int64? {
        let (first, served, latest) = (window.first, window.served, window.latest)
        // A precise window is one instant; non-positive or unbounded instants are polls and
        // waits without a deadline.
        guard !window.precise, first > 0, latest < .max, reserve >= 0 else { return nil }
        // At most the 1/16 of the window that the steps leave (no overflow: latest > first > 0).
        let reserve = min(reserve, (latest - first) / 16)
        let end = latest - reserve  // no overflow: latest > first > 0, reserve >= 0
        guard end >= first else { return nil }
        for step in Self.steps {
            let point = latestPoint(atOrBefore: end, step: step)
            if point >= served { return point }
        }
        let width = end - first
        // `step >= width - width / 10` is `10 * step >= 9 * width` without overflow.
        guard let step = Self.steps.first(where: { $0 <= width && $0 >= width - width / 10 }) else { return nil }
        return latestPoint(atOrBefore: end, step: step)
    }

    /// The latest point of `step`'s grid at or before `instant` (positive).
    func latestPoint(atOrBefore instant: Int64, step: Int64) -> Int64 {
        let offset = (phase % step + step) % step  // in [0, step): no overflow below
        return instant - ((instant - offset) % step + step) % step
    }

    /// Reads `/proc/sys/kernel/random/boot_id` (36 characters and a newline).
    private static func readBootID() -> String? {
        Descriptors.readSmallFile("/proc/sys/kernel/random/boot_id", limit: 64)
            .map { String(decoding: $0, as: UTF8.self) }
    }
}
