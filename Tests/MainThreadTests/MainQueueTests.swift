import RunLoopKitExampleTesting
import Testing

/// The main loop and libdispatch's main queue, on the real main thread.
///
/// Swift Testing runs tests off the main thread (its async entry point has given the main
/// thread to `dispatchMain()`), so each scenario runs in `main-queue-probe`, whose synchronous
/// main keeps the main thread, once on `EVRunLoop.main` and once on CFRunLoop's main loop.
@Suite("Real time: main queue") struct MainQueueTests {
    /// The probe's log of `scenario` on `loop` (`ev` or `cf`).
    static func log(_ scenario: String, on loop: String) async throws -> [String] {
        let result = try await ExampleProcess.runSuspending(example: "main-queue-probe", [scenario, loop], timeLimit: 30)
        #expect(result.status == 0, "\(scenario) on \(loop): stderr: \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("the main loop services the main queue as CFRunLoop's does, run or driven by poll()",
          arguments: ["queued", "fairness", "nested", "empty"], ["ev", "polled"])
    func sameAsCoreFoundation(scenario: String, driver: String) async throws {
        let ours = try await Self.log(scenario, on: driver)
        let reference = try await Self.log(scenario, on: "cf")
        #expect(ours == reference)
        #expect(!ours.isEmpty)
    }

    @Test func queuedWorkIsOneHandledSourceAfterTheWait() async throws {
        #expect(try await Self.log("queued", on: "ev") == [
            "o@entry", "o@beforeTimers", "o@beforeSources", "o@beforeWaiting", "o@afterWaiting",
            "dispatch(a)", "dispatch(b)", "o@exit", "return(handledSource)",
        ])
    }

    @Test func theTraceShowsTheMainQueue() async throws {
        #expect(try await Self.log("trace", on: "ev") == [
            "entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "mainQueue",
            "exit", "return(handledSource)",
        ])
    }

    @Test(arguments: ["ev", "polled"])
    func dispatchMainActorAndMainActorRunAllRunOnTheMainThreadWithinOneRun(driver: String) async throws {
        let ours = try await Self.log("concurrency", on: driver)
        #expect(Set(ours) == [
            "async main=true", "asyncAfter main=true", "mainActorTask main=true",
            "MainActor.run main=true", "return(stopped)",
        ])
        #expect(ours.last == "return(stopped)")
        let reference = try await Self.log("concurrency", on: "cf")
        #expect(Set(ours) == Set(reference))
    }

    @Test func experimentalMainActorExecutorRunsMainActorWorkAsJobsOfTheMainLoop() async throws {
        // The two tasks are independent: either may reach the main actor first.
        #expect(Set(try await Self.log("main-executor", on: "ev")) == [
            "task main=true", "MainActor.run main=true", "job",
        ])
    }

    @Test func aMainActorModelUsesItsStateInTimerCalloutsOfTheMainLoop() async throws {
        #expect(try await Self.log("isolated", on: "ev") == ["ticks 3 woke=true main=true"])
    }

    @Test func theMainLoopRunsItsTimersAndTheMainQueueInAChildForkedFromTheMainThread() async throws {
        #expect(try await Self.log("fork", on: "ev") == ["child: child queue", "child: child timer", "parent queue", "child status 0"])
    }
}
