import Foundation
import RunLoopKit

/// Workload 11 (issue 15): P processes at once, each with 1,000 timers of 0.2 s and 0.1 s
/// tolerance at random phases, each recording its wakes; the figures are over the window
/// [start + 1 s, start + S − 0.5 s]. The machine's instants are counted both as the deadlines
/// that ended the waits and as when each process ran: 8 processes queued on 2 cores land one
/// shared wake in several 1 ms buckets.
enum MachineCoalescing: Workload {
    static let name = "machine"
    static let summary = "P processes (1, 4, 8) at once, each with 1,000 timers of 0.2 s and 0.1 s tolerance at random phases (RunLoopKit .sharedGrid and .perLoop, libev's collect interval, Dispatch's leeway); one process's wakes/s, the machine's distinct wake instants/s (1 ms buckets) and 5 ms clusters/s, early fires, lateness past the tolerance; three interleaved runs of 8 s per figure (median and spread)."
    static let timers = 1_000
    static let interval = 0.2
    static let tolerance = 0.1

    /// How one child process runs its timers.
    enum Mode: String, CaseIterable {
        case sharedGrid = "grid", perLoop = "perloop", libev, dispatch

        /// The mode's name in charts.
        var label: String {
            switch self {
            case .sharedGrid: "RunLoopKit .sharedGrid"
            case .perLoop: "RunLoopKit .perLoop"
            case .libev: "libev collect 0.1 s"
            case .dispatch: "Dispatch leeway 0.1 s"
            }
        }

        var peer: Peer {
            switch self {
            case .sharedGrid, .perLoop: .runLoopKit
            case .libev: .libev
            case .dispatch: .dispatch
            }
        }
    }

    static let unavailable: [Peer: String] = [
        .foundation: "no tolerance on Linux (CF ignores it)",
        .nio: "no tolerance on scheduled tasks",
        .taskSleep: "see sleeps: Task.sleep's tolerance is dropped on Linux",
        .timerSequence: "see sleeps",
    ]

    /// What the processes of one run did in the window.
    struct Outcome {
        var wakesPerProcess: Double
        /// Distinct 1 ms buckets of the instants the processes ran after each wake.
        var instantsPerSecond: Double
        /// Distinct 1 ms buckets of the deadlines that ended the waits (NaN: not reported).
        var deadlineInstantsPerSecond: Double
        var clustersPerSecond: Double
        var early: Double
        var beyondToleranceMaxMs: Double
    }

    static func measure(_ plan: Plan) -> [Row] {
        var outcomes: [Int: [Mode: [Outcome]]] = [:]
        for _ in 0..<plan.machineRepetitions {
            for processes in plan.machineProcesses {
                for mode in Mode.allCases where plan.peers.contains(mode.peer) {
                    let outcome = run(mode, processes: processes, seconds: plan.machineSeconds, launch: plan.machineLaunch)
                    outcomes[processes, default: [:]][mode, default: []].append(outcome)
                    let chart = [("instants", outcome.instantsPerSecond), ("clusters", outcome.clustersPerSecond)]
                    for (key, y) in chart { ChartData.shared.add("machine-\(key)/\(mode.rawValue)", mode.peer, x: Double(processes), y: y) }
                }
            }
        }
        /// P = 1's median on the grid, against which P > 1 is judged.
        func oneProcess(_ figure: (Outcome) -> Double) -> Double? {
            outcomes[1]?[.sharedGrid].map { Summary($0.map(figure).filter { !$0.isNaN }).median }
        }
        let (oneRan, oneDeadlines) = (oneProcess(\.instantsPerSecond), oneProcess(\.deadlineInstantsPerSecond))
        return plan.machineProcesses.flatMap { processes in
            let byMode = outcomes[processes] ?? [:]
            /// A row of `figure` for `modes`; a mode with a figure it could not give is left out.
            func row(_ metric: String, _ unit: String, better: Row.Better = .lower, modes: [Mode] = [.sharedGrid, .libev, .dispatch],
                     unavailable: [Peer: String] = unavailable, _ figure: (Outcome) -> Double) -> Row {
                var values: [Peer: [Double]] = [:]
                for mode in modes { if let list = byMode[mode] { values[mode.peer] = list.map(figure) } }
                let suffix = modes == [.perLoop] ? ", RunLoopKit .perLoop" : " (RunLoopKit: .sharedGrid)"
                return Row.make(name, "P = \(processes): \(metric)\(suffix)", unit: unit, better: better,
                                values: values.filter { !$0.value.contains(where: \.isNaN) }, unavailable: unavailable)
            }
            /// The goal of P > 1 against P = 1's median `one`.
            func againstOne(_ row: Row, _ one: Double?) -> Row {
                guard processes > 1, let one else { return row }
                return row.withGoal("≤ 1.25 × P = 1's") { $0.median <= 1.25 * one }
            }
            // The kernel's wake instants: only RunLoopKit reports the deadline that ended a wait.
            let notExposed = "the instant its wait was armed to end is not exposed (see the row of when each process ran)"
            let kernel = row("machine's distinct kernel wake instants/s, the deadlines that ended the waits (1 ms buckets)",
                             "wakes/s", modes: [.sharedGrid],
                             unavailable: unavailable.merging([.libev: notExposed, .dispatch: notExposed]) { $1 }) {
                $0.deadlineInstantsPerSecond
            }
            // Dispatch wakes ~1 ms apart: 5 ms merging chains them into a few long clusters,
            // a figure that says nothing about its wakes (see its 1 ms row).
            var clusters = row("machine's wake clusters/s (wakes closer than 5 ms merged)", "wakes/s") { $0.clustersPerSecond }
            if clusters.cells[.dispatch]?.summary != nil {
                clusters.cells[.dispatch] = .unavailable(reason: "its wakes are ~1 ms apart: 5 ms merging chains them into a few clusters (see the 1 ms row)")
            }
            let perLoop = unavailable.merging([.libev: "see the .sharedGrid row", .dispatch: "see the .sharedGrid row"]) { $1 }
            return [
                row("wakes/s of one process (mean over processes)", "wakes/s") { $0.wakesPerProcess }
                    .withGoal("≤ 11 wakes/s") { $0.max <= 11 },
                againstOne(kernel, oneDeadlines),
                // The machine's wakes as the held-out check counts them: when each process
                // ran, against one process's on the grid.
                againstOne(row("machine's distinct wake instants/s, when each process ran (1 ms buckets)", "wakes/s") {
                    $0.instantsPerSecond
                }, oneRan),
                clusters,
                row("fires before their date", "fires") { $0.early }.withGoal("none") { $0.max == 0 },
                row("lateness past the tolerance, max", "ms", better: .neither) { $0.beyondToleranceMaxMs },
                row("machine's distinct kernel wake instants/s (1 ms buckets)", "wakes/s", modes: [.perLoop],
                    unavailable: perLoop) { $0.deadlineInstantsPerSecond },
                row("machine's distinct wake instants/s, when each process ran (1 ms buckets)", "wakes/s", modes: [.perLoop],
                    unavailable: perLoop) { $0.instantsPerSecond },
                row("machine's wake clusters/s (5 ms)", "wakes/s", modes: [.perLoop], unavailable: perLoop) { $0.clustersPerSecond },
            ]
        }
    }

    /// Runs `processes` children in `mode` for `seconds` from a common start `launch` seconds
    /// away, and sums up what they printed.
    static func run(_ mode: Mode, processes: Int, seconds: Double, launch: Double) -> Outcome {
        Quiet.wait()
        let start = Clock.monotonic() + Int64(launch * 1e9)
        let window = Record.window(start: start, seconds: seconds)
        let outputs = Children.run(name, count: processes) { index in
            [mode.rawValue, String(start), String(seconds), String(UInt64(start) &+ UInt64(index))]
        }
        let span = Double(window.upperBound - window.lowerBound) / 1e9
        var (all, deadlines, deadlinesReported) = ([Int64](), [Int64](), false)
        var (perProcess, early, beyond) = ([Double](), 0.0, Int64.min)
        for output in outputs {
            var count = 0
            for line in output.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.first == "wake", parts.count == 3, let instant = Int64(parts[1]) {
                    guard window.contains(instant) else { continue }
                    all.append(instant)
                    count += 1
                    // The kernel's wake: the deadline that ended the wait, or else the wake itself.
                    let deadline = Int64(parts[2])
                    deadlines.append(deadline ?? instant)
                    deadlinesReported = deadlinesReported || deadline != nil
                } else if parts.first == "fires", parts.count == 3, let soon = Double(parts[1]), let late = Int64(parts[2]) {
                    early += soon
                    beyond = max(beyond, late)
                } else {
                    fatalError("loop-bench machine: a child printed \(line.debugDescription)")
                }
            }
            perProcess.append(Double(count) / span)
        }
        all.sort()
        let buckets = Set(all.map { $0 / 1_000_000 }).count
        let deadlineBuckets = Set(deadlines.map { $0 / 1_000_000 }).count
        let clusters = all.indices.filter { $0 == 0 || all[$0] - all[$0 - 1] > 5_000_000 }.count
        return Outcome(wakesPerProcess: perProcess.reduce(0, +) / Double(max(perProcess.count, 1)),
                       instantsPerSecond: Double(buckets) / span,
                       deadlineInstantsPerSecond: deadlinesReported ? Double(deadlineBuckets) / span : .nan,
                       clustersPerSecond: Double(clusters) / span,
                       early: early, beyondToleranceMaxMs: Double(beyond) / 1e6)
    }

    /// A child: `[mode, startNs, seconds, seed]`; prints `wake <ns>
    /// <deadline ns or ->` per wake in the window, then `fires <early> <max ns past tolerance>`.
    static func child(_ arguments: [String]) {
        guard arguments.count == 4, let mode = Mode(rawValue: arguments[0]), let start = Int64(arguments[1]),
              let seconds = Double(arguments[2]), let seed = UInt64(arguments[3]) else {
            fatalError("loop-bench machine child: expected mode, start, seconds, seed; got \(arguments)")
        }
        var random = SeededRandom(seed: seed)
        let phases = (0..<timers).map { _ in Double.random(in: 0..<interval, using: &random) }
        while Clock.monotonic() < start { usleep(1_000) }
        usleep(UInt32(Double.random(in: 0..<interval, using: &random) * 1e6))
        let end = start + Int64(seconds * 1e9)
        let record: Record = switch mode {
        case .sharedGrid, .perLoop: runLoop(mode, phases: phases, end: end)
        case .libev, .dispatch: runTimers(mode, phases: phases, end: end)
        }
        let window = Record.window(start: start, seconds: seconds)
        var text = ""
        for wake in record.wakes where window.contains(wake.at) {
            text += "wake \(wake.at) \(wake.deadline.map(String.init) ?? "-")\n"
        }
        let fires = record.fires.filter { window.contains($0.at) }
        let beyond = fires.map { $0.at - $0.scheduled - Int64(tolerance * 1e9) }.max() ?? Int64.min
        text += "fires \(fires.filter { $0.at < $0.scheduled }.count) \(beyond)\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// One process's wakes (monotonic ns, and the deadline that ended the wait where the
    /// loop reports it) and fires (scheduled date, fire instant).
    struct Record {
        var wakes: [(at: Int64, deadline: Int64?)] = []
        var fires: [(scheduled: Int64, at: Int64)] = []

        /// The window reported: from 1 s after the common start to 0.5 s before the end.
        static func window(start: Int64, seconds: Double) -> Range<Int64> {
            (start + 1_000_000_000)..<(start + Int64((seconds - 0.5) * 1e9))
        }
    }

    /// RunLoopKit on this (the main) thread; the callouts touch the record only here, so it
    /// is a plain local whose callouts go through `EVRunLoop.isolated`.
    private static func runLoop(_ mode: Mode, phases: [Double], end: Int64) -> Record {
        let loop = EVRunLoop.current
        loop.timerCoalescing = mode == .sharedGrid ? .sharedGrid : .perLoop
        final class Box { var record = Record() }
        let box = Box()
        let fired: @Sendable (EVTimer) -> Void = EVRunLoop.isolated { timer in
            box.record.fires.append((timer.fireInstant?.nanoseconds ?? 0, Clock.monotonic()))
        }
        let woke: @Sendable () -> Void = EVRunLoop.isolated {
            box.record.wakes.append((Clock.monotonic(), loop.wakeDeadline?.nanoseconds))
        }
        let base = Clock.monotonic()
        var added: [EVTimer] = []
        for phase in phases {
            let timer = EVTimer(fireAt: EVRunLoop.Instant(nanoseconds: base + Int64(phase * 1e9)),
                                interval: .seconds(double: interval), repeats: true,
                                tolerance: .seconds(double: tolerance), block: fired)
            loop.add(timer, forMode: .default)
            added.append(timer)
        }
        let observer = EVObserver(activities: .afterWaiting) { _, _ in woke() }
        loop.add(observer, forMode: .default)
        _ = loop.run(mode: .default, for: .nanoseconds(max(0, end - Clock.monotonic())))
        for timer in added { timer.invalidate() }
        observer.invalidate()
        return box.record
    }

    /// The child's timers from now to `end` on raw libev with the collect interval, which logs
    /// its wakes (``TimerRun/libev(log:wakes:)``), or on Dispatch timer sources on one serial
    /// queue (``TimerRun/dispatch(log:)``), whose wake is a batch of handlers less than 200 µs apart.
    private static func runTimers(_ mode: Mode, phases: [Double], end: Int64) -> Record {
        let run = TimerRun(interval: interval, firstAfter: phases, tolerance: tolerance, seconds: Double(end - Clock.monotonic()) / 1e9)
        let fires = FireLog(capacity: Int((run.seconds / interval + 2) * Double(phases.count)))
        let wakes = FireLog(capacity: mode == .libev ? 100_000 : 0)
        let outcome = mode == .libev ? run.libev(log: fires, wakes: wakes) : run.dispatch(log: fires)
        var record = Record(wakes: wakes.values.map { ($0, nil) }, fires: datesServed(fires, firstFire: outcome.firstFire))
        for fire in record.fires where mode == .dispatch && record.wakes.last.map({ fire.at - $0.at > 200_000 }) ?? true {
            record.wakes.append((fire.at, nil))
        }
        return record
    }

    /// Each logged fire with the date it served, as CF counts a late repeating timer's: the
    /// last of its dates (first fire + k × interval) at or before the fire.
    private static func datesServed(_ log: FireLog, firstFire: [Int64]) -> [(scheduled: Int64, at: Int64)] {
        var next = firstFire
        let step = Int64(interval * 1e9)
        return log.entries.map { id, at in
            while next[id] + step <= at { next[id] += step }
            defer { next[id] += step }
            return (next[id], at)
        }
    }
}
