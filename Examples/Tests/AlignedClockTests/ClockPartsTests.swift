import AlignedClock
import ExampleSupport
import Foundation
import Testing

/// The small value types: samples, the lead estimator, `--lead` parsing, updates.
@Suite struct ClockPartsTests {
    @Test func samplesQuantilesInterpolate() {
        var samples = Samples()
        for value in [4.0, 1, 3, 2] { samples.append(value) }
        #expect(samples.median == 2.5)
        #expect(samples.quantile(0) == 1)
        #expect(samples.quantile(1) == 4)
        #expect(abs(samples.p99 - 3.97) < 1e-12)
        #expect(samples.mean == 2.5)
        #expect(abs(samples.spread - 1.118_033_988_749_895) < 1e-12)
        #expect(Samples().median == 0)
    }

    @Test func estimatorTakesTheMedianOfRecentMeasurements() {
        var estimator = LeadEstimator(window: 3)
        #expect(estimator.lead == 0)
        estimator.record(0.2)
        estimator.record(0.9)  // one slow publish does not move the lead far
        #expect(abs(estimator.lead - 0.55) < 1e-12)
        estimator.record(0.21)
        #expect(estimator.lead == 0.21)
        estimator.record(0.22)
        estimator.record(0.23)  // 0.9 has left the window
        #expect(estimator.lead == 0.22)
        #expect(estimator.count == 3)
    }

    @Test func leadArguments() {
        #expect(LeadSetting(argument: "auto") == .automatic)
        #expect(LeadSetting(argument: "0.18") == .fixed(0.18))
        #expect(LeadSetting(argument: "1") == nil)
        #expect(LeadSetting(argument: "-0.1") == nil)
        #expect(LeadSetting(argument: "soon") == nil)
    }

    @Test func updateBeforeTheNextSecondIsANegativePhase() {
        let tick = Date(timeIntervalSince1970: 100.7)
        let update = DisplayUpdate(strategy: .naive, shownSecond: 100, tick: tick, appeared: tick)
        #expect(abs(update.lag - 0.7) < 1e-6)
        #expect(abs(update.phase + 0.3) < 1e-6)
    }

    @Test func compareAddsTheLeadRowOnlyWithALead() {
        #expect(ClockConfiguration(compare: true, naiveStartDelay: 0).strategies == [.naive, .polling, .aligned])
        #expect(ClockConfiguration(compare: false, lead: .automatic, naiveStartDelay: 0).strategies
            == [.aligned, .alignedWithLead])
    }

    @Test func summaryRoundTripsThroughJSON() throws {
        let row = StrategyReport(strategy: .aligned, updates: [], fires: 3, elapsed: 3)
        let summary = ClockSummary(
            duration: 3, strategies: [row], loopWakeupsPerSecond: 1, publishCost: 0, lead: nil,
            alignedTickPhaseMean: 0, alignedTickPhaseSpread: 0)
        let decoded = try JSONDecoder().decode(ClockSummary.self, from: Data(try summary.json().utf8))
        #expect(decoded == summary)
        #expect(try !summary.json().contains("\n"))
    }
}
