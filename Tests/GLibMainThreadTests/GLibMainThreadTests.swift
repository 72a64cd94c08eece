import ExampleTesting
import Testing

/// GLib and EVRunLoop.main on the real main thread, in `glib-main-probe` (Swift Testing runs
/// tests off the main thread; the probe's synchronous main keeps it).
@Suite("Real time: GLib on the main thread") struct GLibMainThreadTests {
    /// The probe's log of `scenario`.
    static func log(_ scenario: String) throws -> [String] {
        let result = try ExampleProcess.run(example: "glib-main-probe", [scenario], timeLimit: 30)
        #expect(result.status == 0, "\(scenario): stderr: \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("EVRunLoop.main hosting GLib's default context runs GLib's sources and the main queue on the main thread")
    func mainLoopHostsTheDefaultContext() throws {
        let log = try Self.log("host")
        #expect(Set(log.dropLast(2)) == [
            "idle main", "timeout main", "fd main", "seconds main", "dispatch main", "mainActor main",
        ])
        #expect(log.count == 8)
        // GLib's order among its own sources: the idle first, the timeout's write, then the descriptor.
        let glib = log.filter { ["idle", "timeout", "fd", "seconds"].contains($0.split(separator: " ").first ?? "") }
        #expect(glib == ["idle main", "timeout main", "fd main", "seconds main"])
        #expect(log.suffix(2) == ["return(stopped)", "owner after unhost: false"])
    }
}
