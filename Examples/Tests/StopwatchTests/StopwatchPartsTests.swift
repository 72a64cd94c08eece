import Foundation
import RunLoopKit
import Stopwatch
import Testing

/// Formatting, keys, `--at` parsing and the stopwatch state on their own.
@Suite struct StopwatchPartsTests {
    @Test func formatPadsAndTruncates() {
        let format = ElapsedFormat(locale: Locale(identifier: "en_US"))
        #expect(format.string(.milliseconds(307_429)) == "05:07.42")
        #expect(format.string(.milliseconds(999)) == "00:00.99")
        #expect(format.string(.seconds(6_000)) == "100:00.00")
        #expect(format.string(.zero - .seconds(1)) == "00:00.00")
    }

    @Test func commaLocaleShowsAComma() {
        #expect(ElapsedFormat(locale: Locale(identifier: "de_DE")).string(.milliseconds(307_429)) == "05:07,42")
        #expect(ElapsedFormat(locale: Locale(identifier: "fr_FR")).decimalSeparator == ",")
    }

    @Test func keysMapToActions() {
        #expect(Action(key: UInt8(ascii: " ")) == .toggle)
        #expect(Action(key: UInt8(ascii: "l")) == .lap)
        #expect(Action(key: UInt8(ascii: "r")) == .reset)
        #expect(Action(key: UInt8(ascii: "q")) == .quit)
        #expect(Action(key: UInt8(ascii: "x")) == nil)
    }

    @Test func scheduledActionArguments() {
        #expect(ScheduledAction(argument: "2.5:lap") == ScheduledAction(delay: 2.5, action: .lap))
        #expect(ScheduledAction(argument: "0:start") == ScheduledAction(delay: 0, action: .start))
        #expect(ScheduledAction(argument: "lap") == nil)
        #expect(ScheduledAction(argument: "-1:lap") == nil)
        #expect(ScheduledAction(argument: "1:jump") == nil)
    }

    @Test func stateAddsRunningPeriods() {
        let t0 = EVRunLoop.Instant(nanoseconds: 1_000_000_000)
        var state = StopwatchState()
        state.start(at: t0)
        #expect(state.elapsed(at: t0 + .milliseconds(1_500)) == .milliseconds(1_500))
        state.stop(at: t0 + .seconds(2))
        #expect(state.elapsed(at: t0 + .seconds(9)) == .seconds(2))
        state.start(at: t0 + .seconds(10))
        state.lap(at: t0 + .seconds(11))
        #expect(state.laps == [.seconds(3)])
        #expect(state.elapsed(at: t0 + .seconds(9)) == .seconds(2))  // never before a start
        state.reset()
        #expect(state == StopwatchState())
    }
}
