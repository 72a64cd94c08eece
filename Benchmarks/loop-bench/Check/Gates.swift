import ArgumentParser
import Foundation

/// `loop-bench --check`: the gated instruction rows (``GateProbes``) against
/// Benchmarks/Thresholds.json. A row fails when it exceeds its threshold by more than
/// ``tolerance`` in each of ``attempts`` counts (a busy machine only ever adds: a preempted
/// anchor read leaves the CPU's counter no bounds); the metrics row also when a callout with
/// metrics costs more than one counter read plus ``metricsAllowance`` over one without.
enum Gates {
    /// How far above its threshold a row may count.
    static let tolerance = 0.02
    /// How many times a row over its bound is counted before it fails; the lowest count stands.
    static let attempts = 3
    /// Instructions a callout may cost with metrics on beyond one counter read.
    static let metricsAllowance = 30.0

    /// One gated row: its key in the thresholds file, what it counts, the probe and the
    /// function whose instructions callgrind counts.
    struct Gate {
        var key: String
        var metric: String
        var mode: String
        var arguments: [String]
        var function = "measuredGate"
    }

    static let all: [Gate] = [
        Gate(key: "fire-1k", metric: "instructions per fire, N = 1,000", mode: "gate-fire", arguments: ["1000", "0"]),
        Gate(key: "fire-10k", metric: "instructions per fire, N = 10,000", mode: "gate-fire", arguments: ["10000", "0"]),
        Gate(key: "fire-100k", metric: "instructions per fire, N = 100,000", mode: "gate-fire", arguments: ["100000", "0"]),
        Gate(key: "create-add-10k", metric: "instructions per create + add, N = 10,000", mode: "gate-schedule",
             arguments: ["10000"], function: "measuredAdd"),
        Gate(key: "invalidate-10k", metric: "instructions per invalidate, N = 10,000", mode: "gate-schedule",
             arguments: ["10000"], function: "measuredInvalidate"),
        Gate(key: "idle-pass", metric: "instructions per polling pass, nothing due", mode: "gate-pass", arguments: ["10000"]),
        Gate(key: "descriptor-add", metric: "instructions per descriptor source created, added and watched, N = 1,000",
             mode: "gate-descriptors", arguments: ["1000"]),
        Gate(key: "perform", metric: "instructions per block performed from the loop's thread and run, N = 10,000",
             mode: "gate-perform", arguments: ["10000"]),
        Gate(key: "actor-call", metric: "instructions per actor call on the loop's executor from a task on the loop, N = 10,000",
             mode: "gate-actor", arguments: ["10000"]),
        Gate(key: "task-start", metric: "instructions per task started on the loop from its thread and run, N = 10,000",
             mode: "gate-task", arguments: ["10000"]),
        Gate(key: "trace-on", metric: "instructions per fire with a trace, N = 1,000", mode: "gate-fire", arguments: ["1000", "2"]),
        Gate(key: "metrics-on", metric: "instructions per fire with metrics, N = 1,000", mode: "gate-fire", arguments: ["1000", "1"]),
    ]

    /// The committed thresholds: Benchmarks/Thresholds.json, next to this package's manifest.
    static let thresholdsPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Thresholds.json").path

    /// Counts every gated row; with `write`, stores the counts as the new thresholds,
    /// otherwise checks them. Throws `ExitCode.failure` when a row fails.
    static func run(write: Bool) throws {
        var unavailable = ""
        guard let callgrind = Callgrind(unavailable: &unavailable) else {
            throw ValidationError("loop-bench --check: \(unavailable)")
        }
        let started = Date()
        var counts: [String: Double] = [:]
        var (metricsOutput, fires) = ("", 1.0)
        for gate in all {
            let count = callgrind.count(in: gate.function, probe: gate.mode, gate.arguments, peer: .runLoopKit)
            counts[gate.key] = (count.perOperation * 10).rounded() / 10
            if gate.key == "metrics-on" { (metricsOutput, fires) = (count.output, count.operations) }
        }
        if write {
            let data = try JSONSerialization.data(withJSONObject: counts, options: [.prettyPrinted, .sortedKeys])
            try (String(decoding: data, as: UTF8.self) + "\n").write(toFile: thresholdsPath, atomically: true, encoding: .utf8)
            print("loop-bench: wrote \(thresholdsPath)")
        }
        let thresholds = try JSONDecoder().decode([String: Double].self, from: Data(contentsOf: URL(fileURLWithPath: thresholdsPath)))
        var failures: [String] = []
        for gate in all {
            guard let threshold = thresholds[gate.key] else {
                failures.append("\(gate.key): no threshold in \(thresholdsPath)")
                continue
            }
            var count = counts[gate.key]!
            for _ in 1..<attempts where count > threshold * (1 + tolerance) {
                let again = callgrind.count(in: gate.function, probe: gate.mode, gate.arguments, peer: .runLoopKit)
                print("again \(gate.key): \(format(count)) over its bound, recounted \(format(again.perOperation))")
                count = min(count, (again.perOperation * 10).rounded() / 10)
            }
            counts[gate.key] = count
            let passed = count <= threshold * (1 + tolerance)
            print("\(passed ? "ok  " : "FAIL") \(gate.key): \(format(count)) \(gate.metric); threshold \(format(threshold)) (+\(Int(tolerance * 100)) %)")
            if !passed {
                failures.append("\(gate.key): \(format(count)) instructions exceed threshold \(format(threshold)) by \(format((count / threshold - 1) * 100)) % (more than \(Int(tolerance * 100)) %)")
            }
        }
        // The metrics goal is reported, not gated, while the library misses it (PROFILING.md,
        // "Goals missed"): the gate is for regressions, and metrics-on's threshold gates those.
        // Its difference is of the counts that stand, recounts included.
        let reads = Callgrind.calls(into: "measuringNow", in: metricsOutput)
        let extra = counts["metrics-on"]! - counts["fire-1k"]!
        let readsPerCallout = Double(reads.calls) / fires
        let readCost = reads.calls > 0 ? Double(reads.instructions) / Double(reads.calls) : 0
        let metricsBound = readCost + metricsAllowance
        let metricsHeld = extra <= metricsBound && readsPerCallout <= 1.01
        print("\(metricsHeld ? "ok  " : "GOAL MISSED") metrics-per-callout: metrics on − off \(format(extra)) instructions per fire; \(format(readsPerCallout)) counter reads of \(format(readCost)) per callout; goal ≤ one read + \(Int(metricsAllowance)) = \(format(metricsBound))")
        print("loop-bench --check: \(all.count) rows counted in \(format(Date().timeIntervalSince(started))) s")
        guard failures.isEmpty else {
            for failure in failures { FileHandle.standardError.write(Data("loop-bench --check: FAILED \(failure)\n".utf8)) }
            throw ExitCode.failure
        }
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
