import Foundation
import Glibc
import RunLoopKit
import Testing

/// Idle sources (issue 27): where they fire in CF's pass, that they keep the loop from
/// waiting, and that anything due or ready goes first.
@Suite("Idle sources")
struct IdleSourceTests {
    @Test("idle callouts stand where the pass would wait; none of those passes waits")
    func placeInThePass() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        let calls = LoopBox(0)
        let started = clock.now
        let idle = EVSource.idle(label: "i") { source in
            calls.value += 1
            if calls.value == 2 { source.invalidate() }
        }
        loop.add(idle, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "t") { _ in }, forMode: .default)
        loop.perform(label: "b") {}
        let result = loop.run(mode: .default, for: .seconds(1))

        #expect(result == .finished)
        #expect(trace.lines == [
            "entry", "beforeTimers", "beforeSources", "block(b)", "source(i)",
            "beforeTimers", "beforeSources", "source(i)",
            "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "timer(t)",
            "exit", "return(finished)",
        ])
        #expect(clock.now == started + .milliseconds(10))  // the idle passes took no time
    }

    @Test("idle sources fire by order, and a polling run fires them once")
    func orderAndPollingRun() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        loop.add(EVSource.idle(order: 2, label: "late") { _ in }, forMode: .default)
        loop.add(EVSource.idle(order: 1, label: "early") { _ in }, forMode: .default)
        loop.trace = trace
        let result = loop.run(mode: .default, for: .zero)
        #expect(result == .timedOut)
        #expect(trace.lines.filter { $0.hasPrefix("source") } == ["source(early)", "source(late)"])
    }

    @Test("a due timer goes first: the pass that fires it fires no idle source")
    func dueTimerFirst() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.add(EVTimer(interval: .milliseconds(5), repeats: false, label: "t") { _ in }, forMode: .default)
        loop.add(EVSource.idle(label: "i") { _ in }, forMode: .default)
        clock.advance(by: .milliseconds(5))
        loop.trace = trace
        _ = loop.run(mode: .default, for: .zero)
        #expect(trace.lines.filter { $0.hasPrefix("source") || $0.hasPrefix("timer") } == ["timer(t)"])
    }

    @Test("an idle callout that removes a later idle source: that one does not fire")
    func earlierCalloutRemovesLater() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        let late = EVSource.idle(order: 2, label: "late") { _ in }
        loop.add(EVSource.idle(order: 1, label: "early") { _ in loop.remove(late, forMode: .default) }, forMode: .default)
        loop.add(late, forMode: .default)
        loop.trace = trace
        _ = loop.run(mode: .default, for: .zero)
        #expect(trace.lines.filter { $0.hasPrefix("source") } == ["source(early)"])
    }

    @Test("in a run nested in a timer's callout, the firing timer does not hold back idle sources")
    func firingTimerIsNotDue() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.add(EVSource.idle(label: "i") { _ in }, forMode: .default)
        let timer = EVTimer(interval: .milliseconds(5), repeats: true, label: "t") { _ in
            _ = loop.run(mode: .default, for: .zero)
        }
        loop.add(timer, forMode: .default)
        clock.advance(by: .milliseconds(5))
        loop.trace = trace
        _ = loop.run(mode: .default, for: .zero)
        timer.invalidate()
        #expect(trace.lines.filter { $0.hasPrefix("source") || $0.hasPrefix("timer") } == ["timer(t)", "source(i)"])
    }
}

@Suite("Real time: idle sources")
struct IdleSourceRealTimeTests {
    @Test("a ready descriptor goes first: its pass fires no idle source")
    func readyDescriptorFirst() {
        let lines = onFreshThread { () -> [String] in
            let loop = EVRunLoop.current
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return [] }
            let (readEnd, writeEnd) = (fds[0], fds[1])
            defer { close(readEnd); close(writeEnd) }
            let source = try! EVSource(fileDescriptor: readEnd, label: "pipe") { _ in
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
            }
            let idle = EVSource.idle(label: "i") { _ in }
            loop.add(source, forMode: .default)
            loop.add(idle, forMode: .default)
            _ = write(writeEnd, "x", 1)
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            _ = loop.run(mode: .default, for: .zero)  // the pipe's pass
            _ = loop.run(mode: .default, for: .zero)  // nothing ready: the idle pass
            loop.trace = nil
            source.invalidate()
            idle.invalidate()
            return trace.lines.filter { $0.hasPrefix("source") }
        }
        #expect(lines == ["source(pipe)", "source(i)"])
    }
}
