import ExampleTesting
import Foundation
import Testing

@Suite("Real time: todo-countdown end to end")
struct EndToEndTests {
    @Test("a 2 s non-interactive run prints one JSON summary on stdout", .timeLimit(.minutes(10)))
    func jsonSummary() throws {
        let output = try ExampleProcess.run(example: "todo-countdown", ["--compare", "--duration", "2", "--json", "--select", "2"])
        #expect(output.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        #expect(object["example"] as? String == "todo-countdown")
        #expect(object["selected_item"] as? Int == 2)
        let strategies = try #require(object["strategies"] as? [[String: Any]])
        #expect(strategies.map { $0["strategy"] as? String } == ["poll", "aligned"])
        for strategy in strategies {
            let seconds = try #require(strategy["duration_seconds"] as? Double)
            #expect(seconds >= 1.9 && seconds < 20)  // 10x the run: a loaded machine fires its end late
            #expect((strategy["redraws"] as? Int ?? 0) >= 2)
        }
        // Poll ticks ten times a second; over 2 s it must have woken far more than aligned.
        let wakeups = strategies.map { $0["wakeups"] as? Int ?? 0 }
        #expect(wakeups[0] > 2 * wakeups[1])
    }

    @Test("--help names the strategies and flags", .timeLimit(.minutes(10)))
    func help() throws {
        let output = try ExampleProcess.run(example: "todo-countdown", ["--help"])
        #expect(output.status == 0)
        for word in ["--strategy", "--compare", "--duration", "--json", "--select", "--remove-done"] {
            #expect(output.stdout.contains(word), "help lacks \(word)")
        }
    }
}
