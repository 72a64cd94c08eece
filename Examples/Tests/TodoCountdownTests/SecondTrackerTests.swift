import Foundation
import ExampleSupport
import Testing
import TodoCountdown

@Suite("SecondTracker")
struct SecondTrackerTests {
    @Test("skipped and repeated seconds and lags are counted from the displayed seconds")
    func counts() {
        var tracker = SecondTracker()
        for shown in [100.3, 101.05, 101.95, 103.02, 104.0] {
            let date = Date(timeIntervalSince1970: shown)
            tracker.record(shown: date, drawnAt: date)
        }
        #expect(tracker.redraws == 5)
        #expect(tracker.repeated == 1)  // 101 twice
        #expect(tracker.skipped == 1)   // 102 never shown
        #expect(tracker.lags.map { ($0 * 1000).rounded() } == [50, 20, 0])
    }

    @Test("lag percentiles are ExampleSupport's, interpolated between neighbours")
    func percentiles() {
        var samples = Samples()
        for value in 1...100 { samples.append(Double(value)) }
        #expect(samples.median == 50.5)
        #expect(abs(samples.p99 - 99.01) < 1e-9)
    }
}
