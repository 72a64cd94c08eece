import Foundation
import PropertyBased
@testable import RunLoopKit
@testable import RunLoopKitBackend
import Testing

/// The grid's placement rule on its own, with the libev backend's reserve, and its phase.
@Suite("Wake grid")
struct WakeGridTests {
    static let ms: Int64 = 1_000_000
    /// An instant on a monotonic clock some hours after boot.
    static let base: Int64 = 3_600_000 * ms

    @Test("the boot id gives one whole-millisecond phase within the coarsest step; malformed ids none")
    func phaseFromBootID() {
        let phase = WakeGrid.phase(bootID: "49f2e8da-4685-452c-abce-3550b716be43\n")
        // 0x49f2e8da4685452c ^ 0xabce3550b716be43 = 0xe23cdd8af193fb6f, mod 56 250 ms.
        #expect(phase == Int64(UInt64(0xe23c_dd8a_f193_fb6f) % 56_250) * Self.ms)
        #expect(WakeGrid.phase(bootID: "49f2e8da-4685-452c-abce-3550b716be44") != phase)
        #expect(WakeGrid.phase(bootID: "not a boot id") == nil)
        #expect(WakeGrid.phase(bootID: "") == nil)
        #expect(WakeGrid.machine.phase >= 0 && WakeGrid.machine.phase < 56_250 * Self.ms)
        #expect(WakeGrid.machine.phase % Self.ms == 0)
    }

    @Test("random windows and reserves: a point of some step, never before first, never inside the reserve kept")
    func placementStaysInWindow() async {
        let window = zip(Gen.int(in: 0...300_000), Gen.int(in: 0...300_000), Gen.int(in: 0...300_000), Gen.int(in: 0...8_000))
        await propertyCheck(count: 500, input: window, Gen.int(in: 0...59_999)) { window, phaseMillis in
            let (firstOffset, servedOffset, latestOffset, reserveMicros) = window
            let offsets = [firstOffset, servedOffset, latestOffset].sorted().map { Int64($0) * 1_000 }
            let (first, served, latest) = (Self.base + offsets[0], Self.base + offsets[1], Self.base + offsets[2])
            let wake = WakeWindow(first: first, served: served, latest: latest, precise: false)
            let reserve = Int64(reserveMicros) * 1_000
            let grid = WakeGrid(phase: Int64(phaseMillis) * Self.ms)
            // The reserve counted: at most the 1/16 of the window the steps leave.
            let kept = min(reserve, (latest - first) / 16)
            guard let point = grid.place(wake, reserve: reserve) else {
                // None only when no step has a point in [served, latest - kept].
                #expect(WakeGrid.steps.allSatisfy { grid.latestPoint(atOrBefore: latest - kept, step: $0) < served })
                return
            }
            #expect(point >= first)
            #expect(point <= latest - kept)
            #expect(WakeGrid.steps.contains { (point - grid.phase) % $0 == 0 })
        }
    }

    @Test("a 0.1 s window holds a 93 ms point after the libev reserve; one step later, the next window does too")
    func lockStepLeavesTheReserve() {
        let grid = WakeGrid(phase: 0)
        let step = 93 * Self.ms
        let reserve: Int64 = 1_000_000 + 2 * 50_000  // 1 ms plus twice a typical oversleep
        // A dense stream: the earliest fire just after the last wake, the served date just
        // before the end of the tolerance (inside the reserve), so only a lock-step point
        // serves: the latest 93 ms point at or before `latest - reserve`.
        var first = grid.latestPoint(atOrBefore: Self.base, step: step) + 200_000
        var placed: [Int64] = []
        for _ in 0..<20 {
            let latest = first + 100 * Self.ms
            let window = WakeWindow(first: first, served: latest - 150_000, latest: latest, precise: false)
            guard let wake = grid.place(window, reserve: reserve) else { break }
            #expect(wake >= first && wake <= latest - reserve)
            placed.append(wake)
            first = wake + 200_000
        }
        #expect(placed.count == 20)
        #expect(Set(zip(placed.dropFirst(), placed).map { $0 - $1 }) == [step])
    }

    @Test("a loaded machine's reserve, past the 1/16 of a window the steps leave, keeps a dense stream on the 93 ms step")
    func loadedReserveKeepsLockStep() {
        let grid = WakeGrid(phase: 0)
        let step = 93 * Self.ms
        // 1 ms plus twice a mean oversleep of 3.5 ms: eight processes woken together on two
        // cores, on a machine busy with other work, run that late.
        let reserve: Int64 = 8 * Self.ms
        var first = grid.latestPoint(atOrBefore: Self.base, step: step) + 200_000
        var placed: [Int64] = []
        for _ in 0..<20 {
            let latest = first + 100 * Self.ms
            let window = WakeWindow(first: first, served: latest - 150_000, latest: latest, precise: false)
            guard let wake = grid.place(window, reserve: reserve) else { break }
            // The reserve kept is the 1/16 of the window the steps leave.
            #expect(wake >= first && wake <= latest - (latest - first) / 16)
            placed.append(wake)
            first = wake + 200_000
        }
        #expect(placed.count == 20)
        #expect(Set(zip(placed.dropFirst(), placed).map { $0 - $1 }) == [step])
    }

    @Test("precise windows, polls and waits without a deadline are left alone")
    func degenerateWindows() {
        let grid = WakeGrid(phase: 0)
        #expect(grid.place(.at(.min), reserve: 0) == nil)
        #expect(grid.place(.at(.max), reserve: 0) == nil)
        let exact = WakeWindow(first: Self.base, served: Self.base, latest: Self.base, precise: true)
        #expect(grid.place(exact, reserve: 0) == nil)
        // A reserve longer than the window counts as 1/16 of it: a window of 1 ms with no
        // grid point in it leaves the per-loop rule to decide.
        let start = grid.latestPoint(atOrBefore: Self.base, step: WakeGrid.steps.last!) + Self.ms
        let short = WakeWindow(first: start, served: start, latest: start + Self.ms, precise: false)
        #expect(grid.place(short, reserve: 2 * Self.ms) == nil)
    }

    @Test("a window centuries long (a huge tolerance) does not overflow")
    func hugeWindow() {
        let grid = WakeGrid(phase: 0)
        // No neutral point (served sits at the very end), so the lock-step test runs on a
        // width near Int64.max.
        let window = WakeWindow(first: Self.base, served: .max - 2, latest: .max - 1, precise: false)
        #expect(grid.place(window, reserve: 0) == nil)
    }

    @Test("on the real loop, a lone tolerant timer waits for the machine's grid point; per loop it does not")
    func realLoopUsesMachineGrid() {
        for coalescing in [EVRunLoop.TimerCoalescing.sharedGrid, .perLoop] {
            // Per loop, the timer fires at its date: a loaded machine can wake the loop past
            // the grid point all the same, so up to three tries, one of which must be early.
            var firedBeforeGridPoint: [Bool] = []
            for _ in 0..<(coalescing == .perLoop ? 3 : 1) {
                let (date, expected, fired) = Self.fireLoneTolerantTimer(coalescing)
                #expect(fired >= date)
                // Generous: a loaded machine may wake us late, but never before the armed instant.
                #expect(fired <= date + 100 * Self.ms + 200 * Self.ms)
                if coalescing == .sharedGrid {
                    #expect(fired >= expected, "fired \((fired - date) / Self.ms) ms after its date, grid point at \((expected - date) / Self.ms) ms")
                }
                firedBeforeGridPoint.append(fired < expected)
                if fired < expected { break }
            }
            if coalescing == .perLoop {
                #expect(firedBeforeGridPoint.contains(true), "per loop: fires at its date, not at the grid point (\(firedBeforeGridPoint.count) tries)")
            }
        }
    }

    /// On a fresh thread's loop with `coalescing`: a lone timer 100 ms tolerant at a date
    /// 100 ms ahead whose machine grid point lies at least 40 ms later, the same for any
    /// reserve from 1 to 5 ms (the reserve follows the measured oversleep). Returns the date,
    /// the grid point and when the timer fired.
    static func fireLoneTolerantTimer(_ coalescing: EVRunLoop.TimerCoalescing) -> (date: Int64, gridPoint: Int64, fired: Int64) {
        onFreshThread { () -> (Int64, Int64, Int64) in
            let loop = EVRunLoop.current
            loop.timerCoalescing = coalescing
            var date = loop.now.nanoseconds + 100 * Self.ms
            func point(_ reserve: Int64) -> Int64? {
                WakeGrid.machine.place(WakeWindow(first: date, served: date, latest: date + 100 * Self.ms, precise: false),
                                       reserve: reserve)
            }
            while !(point(Self.ms) == point(5 * Self.ms) && (point(Self.ms) ?? 0) >= date + 40 * Self.ms) {
                date += Self.ms
            }
            let fired = LoopBox<Int64>(0)
            loop.add(EVTimer(fireAt: EVRunLoop.Instant(nanoseconds: date), tolerance: .milliseconds(100)) { _ in
                fired.value = loop.now.nanoseconds
                loop.stop()
            }, forMode: .default)
            loop.run(mode: .default, for: .seconds(2))
            return (date, point(Self.ms)!, fired.value)
        }
    }
}
