import ExampleTesting
import Foundation
import Testing

@Suite("Real time: task-timers end to end")
struct EndToEndTests {
    /// Runs the scroll script with the refresh timer in `mode` and returns the session.
    func scrollSession(_ mode: String) throws -> [String: Any] {
        let output = try ExampleProcess.run(example: "task-timers", ["--timer-mode", mode, "--script", "a,a,wait 0.5,s,wait 0.2", "--json"])
        #expect(output.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        #expect(object["example"] as? String == "task-timers")
        return try #require(object["session"] as? [String: Any])
    }

    @Test("scripted: a default-mode timer misses ticks while tracking, a common-mode one does not",
          .timeLimit(.minutes(10)))
    func trackingFreeze() throws {
        let frozen = try scrollSession("default")
        #expect(frozen["ticks_during_tracking"] as? Int == 0)
        #expect((frozen["ticks_missed_during_tracking"] as? Int ?? 0) >= 1)
        let live = try scrollSession("common")
        #expect((live["ticks_during_tracking"] as? Int ?? 0) >= 1)
        #expect(live["ticks_missed_during_tracking"] as? Int == 0)
    }

    @Test("a 2 s run without a terminal plays the built-in script and prints JSON", .timeLimit(.minutes(10)))
    func defaultRun() throws {
        let output = try ExampleProcess.run(example: "task-timers", ["--duration", "2", "--json"])
        #expect(output.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let session = try #require(object["session"] as? [String: Any])
        #expect(session["tasks_added"] as? Int == 3)
        let seconds = try #require(session["duration_seconds"] as? Double)
        #expect(seconds >= 1.9 && seconds < 20)  // 10x the run: a loaded machine fires its end late
    }

    @Test("--compare-tolerance wakes less often with tolerance", .timeLimit(.minutes(10)))
    func compareTolerance() throws {
        let output = try ExampleProcess.run(example: "task-timers", ["--compare-tolerance", "--tolerance-tasks", "100", "--duration", "2", "--json"])
        #expect(output.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let comparison = try #require(object["tolerance_comparison"] as? [String: Any])
        let without = try #require(comparison["without"] as? [String: Any])
        let with = try #require(comparison["with"] as? [String: Any])
        let fewer = try #require(with["wakeups"] as? Int)
        let more = try #require(without["wakeups"] as? Int)
        #expect(fewer < more)
        #expect((with["earliest_ms"] as? Double ?? -1) >= 0)
    }

    @Test("--help lists the keys and flags", .timeLimit(.minutes(10)))
    func help() throws {
        let output = try ExampleProcess.run(example: "task-timers", ["--help"])
        #expect(output.status == 0)
        for word in ["--timer-mode", "--script", "--duration", "--json", "--compare-tolerance", "scroll"] {
            #expect(output.stdout.contains(word), "help lacks \(word)")
        }
    }
}
