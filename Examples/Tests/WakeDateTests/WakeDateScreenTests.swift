import Foundation
import RunLoopKit
import Testing
import WakeDate

/// The live display: a line per pass off a terminal, a table redrawn in place on one.
@Suite struct WakeDateScreenTests {
    private func pass(slow: Bool) -> PassRecord {
        let wake = Date(timeIntervalSince1970: 100)
        let instant = EVRunLoop.Instant(nanoseconds: 5)
        func reading(_ name: String, after seconds: Double) -> Reading {
            Reading(callout: name, date: wake.addingTimeInterval(seconds), observed: wake.addingTimeInterval(0.000_002),
                    wakeDate: wake, wakeInstant: instant)
        }
        var record = PassRecord(index: 3, isSlow: slow)
        record.readings = [reading("row 1", after: 0.000_010), reading("row 2", after: 0.000_020),
                           reading("block", after: slow ? 0.025_030 : 0.000_030)]
        record.slowIndex = slow ? 1 : nil
        return record
    }

    @Test func plainScreenSummarisesEachPassOnOneLine() {
        let screen = WakeDateScreen(redraws: false)
        #expect(screen.text(for: pass(slow: false))
            == "pass 3 (plain): Date() spread 20.0 µs, observer spread 0.0 µs, wakeDate spread 0.0 µs\n")
        #expect(screen.text(for: pass(slow: true)).contains("after the slow callout wakeDate is 25.030 ms stale"))
    }

    @Test func terminalScreenRedrawsTheTable() {
        let screen = WakeDateScreen(redraws: true)
        let first = screen.text(for: pass(slow: true))
        #expect(first.contains("<- slow callout"))
        #expect(first.filter { $0 == "\n" }.count == 5)
        #expect(screen.text(for: pass(slow: false)).hasPrefix("\u{1B}[5A"))
    }
}
