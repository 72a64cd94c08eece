import Foundation
import Glibc
import RunLoopKit
import Testing

@Suite("Trace")
struct TraceTests {
    @Test("records every notification point and callout of a run, in order")
    func wholeRun() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVObserver(activities: [.entry, .exit], label: "o") { _, _ in }, forMode: .default)
        loop.add(EVTimer(interval: 1, repeats: false, label: "t") { _ in }, forMode: .default)
        loop.perform(label: "b") {}
        let result = loop.run(mode: .default, for: .seconds(10))

        #expect(result == .finished)
        #expect(trace.lines == [
            "entry", "o@entry", "beforeTimers", "beforeSources", "block(b)", "beforeWaiting",
            "afterWaiting", "timer(t)", "exit", "o@exit", "return(finished)",
        ])
        trace.removeAll()
        #expect(trace.events.isEmpty)
    }

    @Test("timed: every step at its instant, callouts with their durations, the wait and why it ended")
    func timedRun() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        loop.add(EVObserver(activities: .afterWaiting, label: "o") { _, _ in
            clock.advance(by: .microseconds(250))  // an observer that takes 0.25 ms
        }, forMode: .default)
        loop.add(EVTimer(interval: .milliseconds(10), repeats: false, label: "t") { _ in
            clock.advance(by: .milliseconds(2))  // a callout that takes 2 ms
        }, forMode: .default)
        let result = loop.run(mode: .default, for: .seconds(1))

        #expect(result == .finished)
        #expect(trace.timedLines() == [
            "0.000 entry", "0.000 beforeTimers", "0.000 beforeSources", "0.000 beforeWaiting",
            "0.000 sleep until 10.000", "10.000 wake(deadline)", "10.000 afterWaiting", "10.000 o@afterWaiting 0.250",
            "10.250 timer(t) 2.000", "12.250 exit", "12.250 return(finished)",
        ])
        #expect(trace.lines == [
            "entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "o@afterWaiting",
            "timer(t)", "exit", "return(finished)",
        ])
    }

    @Test("each entry names the mode and depth of the run it belongs to, nested runs included")
    func modesAndDepths() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace()
        loop.trace = trace
        let tracking = EVRunLoop.Mode("tracking")
        loop.add(EVTimer(interval: .milliseconds(5), repeats: false, label: "inner") { _ in }, forMode: tracking)
        loop.perform(label: "outer") { loop.run(mode: tracking, for: .seconds(1)) }
        _ = loop.run(mode: .default, for: .zero)
        _ = loop.run(mode: "empty", for: .zero)

        let steps = trace.entries.map { entry in
            let step = switch entry.step {
            case .event(let event): "\(event)"
            case .sleep: "sleep"
            case .wake(let reason): "wake(\(reason))"
            }
            return "\(entry.depth) \(entry.mode?.rawValue ?? "-") \(step)"
        }
        #expect(steps == [
            "1 kCFRunLoopDefaultMode entry", "1 kCFRunLoopDefaultMode beforeTimers", "1 kCFRunLoopDefaultMode beforeSources",
            "1 kCFRunLoopDefaultMode block(outer)",
            "2 tracking entry", "2 tracking beforeTimers", "2 tracking beforeSources", "2 tracking beforeWaiting",
            "2 tracking sleep", "2 tracking wake(deadline)", "2 tracking afterWaiting", "2 tracking timer(inner)",
            "2 tracking exit", "2 tracking return(finished)",
            "1 kCFRunLoopDefaultMode exit", "1 kCFRunLoopDefaultMode return(timedOut)",
            "0 - return(finished)",
        ])
    }

    @Test("a trace set during a run knows its depth but not its mode; runs it sees enter name theirs")
    func setDuringARun() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace()
        let tracking = EVRunLoop.Mode("tracking")
        let timer = EVTimer(interval: .milliseconds(5), repeats: true, label: "inner") { _ in }
        loop.add(timer, forMode: tracking)
        loop.perform(label: "outer", EVRunLoop.isolated {
            loop.trace = trace
            loop.run(mode: tracking, for: .milliseconds(7))
            trace.removeAll()  // forgets the steps, not which runs are going on
            loop.run(mode: tracking, for: .milliseconds(4))
            timer.invalidate()
        })
        _ = loop.run(mode: .default, for: .zero)

        let runs = trace.entries.map { "\($0.depth) \($0.mode?.rawValue ?? "-")" }
        #expect(runs == Array(repeating: "2 tracking", count: runs.count - 2) + ["1 -", "1 -"])
        #expect(trace.lines.first == "entry" && trace.lines.suffix(2) == ["exit", "return(timedOut)"])
    }

    @Test("a trace keeps its last entries, and forgets them on removeAll")
    func ringKeepsTheLast() {
        let loop = EVRunLoop(clock: EVVirtualClock())
        let trace = EVRunLoop.Trace(capacity: 3)
        loop.trace = trace
        loop.perform(label: "b") {}
        _ = loop.run(mode: .default, for: .zero)
        #expect(trace.lines.count == 3 && trace.lines.last?.hasPrefix("return(") == true)
        #expect(trace.entries.count == 3)
        #expect(trace.droppedCount > 0)
        trace.removeAll()
        #expect(trace.entries.isEmpty && trace.droppedCount == 0)
    }

    @Test("a callout whose entry the ring wrapped past while it ran still gets its duration")
    func durationAfterTheRingWrapped() {
        let clock = EVVirtualClock()
        let loop = EVRunLoop(clock: clock)
        let trace = EVRunLoop.Trace(capacity: 4)
        loop.trace = trace
        loop.perform(label: "b") {
            loop.run(mode: "empty", for: .zero)  // one entry, which fills the ring and wraps it
            clock.advance(by: .milliseconds(2))
        }
        _ = loop.run(mode: .default, for: .zero)
        #expect(trace.timedLines() == ["0.000 block(b) 2.000", "0.000 return(finished)", "2.000 exit", "2.000 return(timedOut)"])
    }
}

@Suite("Real time: trace of waits")
struct TraceWaitTests {
    @Test("a wait ended by a wake-up from another thread says so")
    func wakeUpReason() {
        let steps = onFreshThread { () -> [String] in
            let loop = EVRunLoop.current
            let trace = EVRunLoop.Trace()
            let source = EVSource(label: "s") { _ in loop.stop() }
            loop.add(source, forMode: .default)
            let other = DispatchSemaphore(value: 0)
            loop.add(EVObserver(activities: .beforeWaiting) { _, _ in other.signal() }, forMode: .default)
            Thread.detachNewThread {
                other.wait()
                source.signal()
                loop.wakeUp()
            }
            loop.trace = trace
            _ = loop.run(mode: .default, for: .seconds(3600))
            loop.trace = nil
            source.invalidate()
            return trace.entries.compactMap { entry -> String? in
                switch entry.step {
                case .sleep(let until):
                    until.map { "sleep until +\(($0.nanoseconds - entry.instant.nanoseconds + 500_000_000) / 1_000_000_000) s" }
                case .wake(let reason): "wake(\(reason))"
                case .event: nil
                }
            }
        }
        #expect(steps == ["sleep until +3600 s", "wake(wakeUp)"])
    }

    @Test("a wait ended by a ready pipe says descriptor")
    func descriptorReason() {
        let reasons = onFreshThread { () -> [String] in
            let loop = EVRunLoop.current
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return [] }
            let (readEnd, writeEnd) = (fds[0], fds[1])
            defer { close(readEnd); close(writeEnd) }
            let source = try! EVSource(fileDescriptor: readEnd) { _ in
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
            }
            loop.add(source, forMode: .default)
            loop.add(EVObserver(activities: .beforeWaiting) { _, _ in _ = write(writeEnd, "x", 1) }, forMode: .default)
            let trace = EVRunLoop.Trace()
            loop.trace = trace
            _ = loop.run(mode: .default, for: .seconds(10), returnAfterSourceHandled: true)
            loop.trace = nil
            source.invalidate()
            return trace.entries.compactMap { entry in
                if case .wake(let reason) = entry.step { "\(reason)" } else { nil }
            }
        }
        #expect(reasons == ["descriptor"])
    }
}

