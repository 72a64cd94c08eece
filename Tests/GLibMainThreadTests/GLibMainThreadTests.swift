import RunLoopKitExampleTesting
import Testing

/// GLib and EVRunLoop.main on the real main thread, in `glib-main-probe` (Swift Testing runs
/// tests off the main thread; the probe's synchronous main keeps it).
@Suite("Real time: GLib on the main thread") struct GLibMainThreadTests {
    /// The probe's log of `scenario`.
    static func log(_ scenario: String) async throws -> [String] {
        let result = try await ExampleProcess.runSuspending(example: "glib-main-probe", [scenario], timeLimit: 30)
        #expect(result.status == 0, "\(scenario): stderr: \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("EVRunLoop.main hosting GLib's default context runs GLib's sources and the main queue on the main thread")
    func mainLoopHostsTheDefaultContext() async throws {
        let log = try await Self.log("host")
        #expect(Set(log.dropLast(2)) == [
            "idle main", "timeout main", "fd main", "seconds main", "dispatch main", "mainActor main",
        ])
        #expect(log.count == 8)
        // GLib's order among its own sources: the idle first (the first pass comes before the
        // 500 ms timeout is due), the timeout's write, then the descriptor.
        let glib = log.filter { ["idle", "timeout", "fd", "seconds"].contains($0.split(separator: " ").first ?? "") }
        #expect(glib == ["idle main", "timeout main", "fd main", "seconds main"])
        #expect(log.suffix(2) == ["return(stopped)", "owner after unhost: false"])
    }

    @Test("EVRunLoop.main attached to GLib's default context: under g_main_loop_run the main queue, the main actor, timers, sources and observers run on the main thread, with no polling")
    func mainLoopAttachedToTheDefaultContext() async throws {
        let log = try await Self.log("attach")
        let ran = log.prefix { !$0.hasPrefix("all seen") }
        #expect(Set(ran) == [
            "dispatch main", "mainActorTask main", "MainActor.run main", "timer main", "alignedTimer main",
            "frameTimer main", "manualSource main", "fdSource main", "observer main", "block main",
        ])
        #expect(ran.count == 10)
        #expect(log.contains("all seen: true"))
        // An idle second: GLib sleeps in poll() until its own timeout; the loop runs at most
        // the pass that ended what came before, and the process sleeps a handful of times.
        let idle = try #require(log.first { $0.hasPrefix("idle second: ") })
        let numbers = idle.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count == 2 && numbers[0] <= 2 && numbers[1] <= 5, "\(idle)")
        #expect(log.contains("attached after detach: false, owner: false"))
        #expect(log.last == "timer fired after detach: false")
    }
}
