import ExampleSupport
import Foundation

/// Everything a wake-date session measured: printed as a table, or as one JSON object.
/// Times are in microseconds unless the name says milliseconds.
public struct WakeDateSummary: Codable, Sendable, Equatable {
    /// Passes of the scene.
    public var passes: Int
    /// Callouts per pass: the row timers and the block.
    public var calloutsPerPass: Int
    /// Whether every pass's readings came from one wake (same `wakeInstant`).
    public var everyPassWasOneWake: Bool
    /// `Date()` spread (latest minus earliest) across one pass, passes without a slow callout: median.
    public var dateSpreadMedianMicroseconds: Double
    /// The same spread: largest.
    public var dateSpreadMaxMicroseconds: Double
    /// Largest spread of the observer's date within a pass (0: the same value throughout).
    public var observedSpreadMaxMicroseconds: Double
    /// Largest spread of the built-in `wakeDate` within a pass (0: the same value throughout).
    public var wakeDateSpreadMaxMicroseconds: Double
    /// Observer date minus built-in `wakeDate`, every reading after registration: median.
    public var observerOffsetMedianMicroseconds: Double
    /// The same offset: largest magnitude.
    public var observerOffsetMaxMicroseconds: Double
    /// Readings left out of the offset because their pass began before the observer was there.
    public var readingsBeforeRegistration: Int
    /// The slow callout's duration.
    public var slowMilliseconds: Double
    /// Passes with a slow callout.
    public var slowPasses: Int
    /// How stale `wakeDate` was (`Date()` minus `wakeDate`) in the callouts after the slow one: median.
    public var staleAfterSlowMedianMilliseconds: Double
    /// The same staleness before the slow callout: median.
    public var staleBeforeSlowMedianMilliseconds: Double
    /// Modes the observer registered itself in, in order.
    public var registeredModes: [String]
    /// Nested runs of the second mode.
    public var nestedRuns: Int
    /// Readings taken in nested runs.
    public var nestedReadings: Int
    /// Observer date minus built-in `wakeDate` in nested runs after registration: largest magnitude.
    public var nestedObserverOffsetMaxMicroseconds: Double

    /// Computes the figures from a session's records.
    @MainActor
    init(session: WakeDateSession) {
        let passes = session.passes
        let all = passes.flatMap(\.readings) + session.nestedReadings
        let registrationWakes = Set(all.filter(\.registered).map(\.wakeInstant))
        let settled = { (reading: Reading) in !registrationWakes.contains(reading.wakeInstant) }

        var spreads = Samples()
        for pass in passes where !pass.isSlow { spreads.append(pass.dateSpread) }
        var offsets = Samples()
        for reading in passes.flatMap(\.readings) where settled(reading) { offsets.append(reading.observerOffset) }
        var nestedOffsets = Samples()
        for reading in session.nestedReadings where settled(reading) { nestedOffsets.append(reading.observerOffset) }
        var staleAfter = Samples()
        var staleBefore = Samples()
        for pass in passes where pass.isSlow {
            for reading in pass.afterSlow { staleAfter.append(reading.staleness) }
            if let slowIndex = pass.slowIndex {
                for reading in pass.readings[...slowIndex] { staleBefore.append(reading.staleness) }
            }
        }

        self.passes = passes.count
        calloutsPerPass = session.configuration.timers + 1
        everyPassWasOneWake = passes.allSatisfy(\.isOnePass)
        dateSpreadMedianMicroseconds = spreads.median * 1e6
        dateSpreadMaxMicroseconds = spreads.maximum * 1e6
        observedSpreadMaxMicroseconds = (passes.map(\.observedSpread).max() ?? 0) * 1e6
        wakeDateSpreadMaxMicroseconds = (passes.map(\.wakeDateSpread).max() ?? 0) * 1e6
        observerOffsetMedianMicroseconds = offsets.median * 1e6
        observerOffsetMaxMicroseconds = offsets.magnitudes.maximum * 1e6
        readingsBeforeRegistration = all.count - offsets.count - nestedOffsets.count
        slowMilliseconds = session.configuration.slowMilliseconds
        slowPasses = passes.filter(\.isSlow).count
        staleAfterSlowMedianMilliseconds = staleAfter.median * 1e3
        staleBeforeSlowMedianMilliseconds = staleBefore.median * 1e3
        registeredModes = session.observed.registrations.map(\.mode.rawValue)
        nestedRuns = passes.filter(\.ranNested).count
        nestedReadings = session.nestedReadings.count
        nestedObserverOffsetMaxMicroseconds = nestedOffsets.magnitudes.maximum * 1e6
    }

    /// The summary as one line of JSON with sorted keys.
    public func json() throws -> String {
        try SummaryJSON.encode(self)
    }

    /// The summary as a table for people.
    public func table() -> String {
        var lines = [
            "\(passes) passes of \(calloutsPerPass) callouts (\(calloutsPerPass - 1) timers and a block)"
                + (everyPassWasOneWake ? ", each pass served by one wake" : ", NOT always one wake"),
            "",
            "within one pass                          median        max",
            String(format: "Date() spread (passes without slow)  %9.1f µs %9.1f µs",
                   dateSpreadMedianMicroseconds, dateSpreadMaxMicroseconds),
            String(format: "observer's date spread                            %9.1f µs", observedSpreadMaxMicroseconds),
            String(format: "EVRunLoop.wakeDate spread                         %9.1f µs", wakeDateSpreadMaxMicroseconds),
            String(format: "observer's date - wakeDate           %9.1f µs %9.1f µs",
                   observerOffsetMedianMicroseconds, observerOffsetMaxMicroseconds),
            String(format: "  (the observer reads Date() right after the loop stamps wakeDate; %d readings of registration passes left out)",
                   readingsBeforeRegistration),
        ]
        if slowPasses > 0 {
            lines.append("")
            lines.append(String(format: "caveat: in %d passes the second row took %.1f ms; wakeDate was then stale by", slowPasses, slowMilliseconds))
            lines.append(String(format: "  %.3f ms (median) in the callouts after it, %.3f ms before it",
                                staleAfterSlowMedianMilliseconds, staleBeforeSlowMedianMilliseconds))
        }
        lines.append("")
        lines.append("lazy registration: " + registeredModes.joined(separator: ", then "))
        lines.append("nested runs of \(WakeDateSession.modal.rawValue): "
            + String(format: "%d, %d readings, observer's date - wakeDate at most %.1f µs",
                     nestedRuns, nestedReadings, nestedObserverOffsetMaxMicroseconds))
        return lines.joined(separator: "\n")
    }
}
