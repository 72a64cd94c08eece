import Foundation
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

    @Test("percentiles by nearest rank")
    func percentiles() {
        let values = (1...100).map(Double.init)
        #expect(Percentile.of(values, 50) == 50)
        #expect(Percentile.of(values, 99) == 99)
        #expect(Percentile.of([], 50) == nil)
    }
}
