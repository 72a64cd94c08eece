import AlignedClock
import ExampleSupport
import Foundation
import Testing

/// The live display: plain lines off a terminal, an in-place block on one.
@Suite struct ClockScreenTests {
    private let update = DisplayUpdate(
        strategy: .polling, shownSecond: 3_600, tick: Date(timeIntervalSince1970: 3_600.05),
        appeared: Date(timeIntervalSince1970: 3_600.05))

    @Test func plainScreenPrintsOneLinePerUpdate() {
        let screen = ClockScreen(strategies: [.polling, .aligned], redraws: false)
        let text = screen.text(for: update, tickPhases: Samples())
        #expect(text.hasPrefix("0.1 s polling"))
        #expect(text.contains("+50.000 ms"))
        #expect(text.filter { $0 == "\n" }.count == 1)
        #expect(!text.contains("\u{1B}"))
    }

    @Test func terminalScreenRedrawsItsBlockInPlace() {
        let screen = ClockScreen(strategies: [.polling, .aligned], redraws: true)
        let first = screen.text(for: update, tickPhases: Samples())
        #expect(!first.hasPrefix("\u{1B}[2A"))
        #expect(first.contains("aligned 1 s timer   --:--:--  waiting"))
        let second = screen.text(for: update, tickPhases: Samples())
        #expect(second.hasPrefix("\u{1B}[2A"))
        #expect(second.filter { $0 == "\n" }.count == 2)
    }
}
