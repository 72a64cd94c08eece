import Foundation
import RunLoopKit
import Stopwatch
import Testing

/// The live display: a line per second and per action off a terminal, one line redrawn on one.
@Suite struct StopwatchScreenTests {
    private func run(redraws: Bool) -> [String] {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let script = [ScheduledAction(delay: 1.5, action: .lap)]
        let session = StopwatchSession(loop: loop, configuration: StopwatchConfiguration(startsAtOnce: true, script: script))
        let screen = StopwatchScreen(redraws: redraws)
        var texts: [String] = []
        session.onEvent = { event, session in
            if let text = screen.text(for: event, session: session) { texts.append(text) }
        }
        session.start()
        loop.run(mode: .default, for: .milliseconds(2_500))
        _ = session.finish()
        return texts
    }

    @Test func plainScreenPrintsSecondsAndActions() {
        let texts = run(redraws: false)
        #expect(texts == [
            "start  00:00.00  running\n",
            "       00:00.01  running\n",
            "       00:01.00  running\n",
            "lap    00:01.50  running   lap 1 00:01.50\n",
            "       00:02.00  running   lap 1 00:01.50\n",
            "stop   00:02.50  stopped   lap 1 00:01.50\n",
        ])
    }

    @Test("a stopwatch that waits for its first key shows 00:00.00 at once")
    func waitingStopwatchShowsZeroAtOnce() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let session = StopwatchSession(loop: loop, configuration: StopwatchConfiguration(startsAtOnce: false))
        var texts: [String] = []
        for redraws in [false, true] {
            let screen = StopwatchScreen(redraws: redraws)
            session.onEvent = { event, session in
                if let text = screen.text(for: event, session: session) { texts.append(text) }
            }
            session.start()
            _ = session.finish()
        }
        #expect(texts.first == "ready  00:00.00  stopped\n")
        #expect(texts.last?.hasPrefix("\r\u{1B}[2K00:00.00  stopped") == true)
    }

    @Test func terminalScreenRedrawsOneLinePerFrame() {
        let texts = run(redraws: true)
        #expect(texts.count == 1 + 250 + 1 + 1)  // start, 250 frames, lap, stop
        #expect(texts.allSatisfy { $0.hasPrefix("\r\u{1B}[2K") && !$0.contains("\n") })
    }
}
