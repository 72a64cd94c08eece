/// How much work each workload does: the full set for `make bench`, or a few seconds in
/// all for `--quick`.
struct Plan: Sendable {
    /// Repetitions of each measurement (the median and spread are over these).
    var repetitions: Int
    /// Interleaved RunLoopKit/libev pairs on the rows whose goal is a ratio to libev
    /// (``Pairs``): at least 7, fewer only in a quick run.
    var pairs: Int
    /// Pairs of the schedule workload: its short children's ratios move with the neighbours'
    /// use of the shared cache (PROFILING.md), so more pairs steady the median.
    var schedulePairs: Int { pairs * 3 }
    /// Whether both children of a pair run bound to one CPU (``Pairs``; `--unpinned`: no).
    var pinsPairs = true
    /// Fire throughput: timer counts (above 100k RunLoopKit and libev only: ``Pairs``),
    /// and the measured window per run (s).
    var throughputCounts: [Int]
    var throughputSeconds: Double
    /// Schedule/invalidate: timer counts (above 100k RunLoopKit and libev only).
    var scheduleCounts: [Int]
    /// Instruction counts (callgrind): timer counts of create + add and invalidate, of the
    /// fire rows (up to 10k: at 100k the count per fire follows how far behind the slowed
    /// loop falls), and the fire probe's window (ms, in valgrind's slowed-down time).
    var instructionTimers: [Int]
    var instructionFireTimers: [Int]
    var instructionFireMilliseconds: Int
    /// Coalescing: seconds per run; precision: fires of the 10 ms timer per run; aligned
    /// phase: the grid (s) and fires per run; cross-thread wake: samples per run; pass
    /// overhead: passes per run.
    var coalescingSeconds: Double
    var precisionFires: Int
    var alignedInterval: Double
    var alignedFires: Int
    var wakeSamples: Int
    var passes: Int
    /// Memory: timer counts (above 100k RunLoopKit and libev only: ``Pairs``).
    var memoryCounts: [Int]
    /// Descriptor sources: idle descriptors, latency samples, and the self-feeding window (s).
    var descriptorCounts: [Int]
    var descriptorSamples: Int
    var descriptorFeedSeconds: Double
    /// Jobs: closures (or actor calls) per CPU burst.
    var jobBurst: Int
    /// Machine coalescing: process counts, seconds per run (the window is 1.5 s shorter),
    /// repetitions (each run takes all its processes' seconds), and the seconds from
    /// starting the processes to their common start.
    var machineProcesses: [Int]
    var machineSeconds: Double
    var machineRepetitions: Int
    var machineLaunch: Double
    /// Child exits: sequential `/bin/true` children per latency run, and per leak check.
    var childSamples: Int
    var childLeakCount: Int
    /// File changes: appends per latency run; idle sources: callouts per run.
    var fileSamples: Int
    var idleCallouts: Int
    /// GLib both ways: posts per latency run, the idle and timer windows (s), and the fires
    /// of the `g_timeout_add(10)` per lateness run; GLib iteration cost: iterations per
    /// child, and per callgrind run.
    var glibSamples: Int
    var glibSeconds: Double
    var glibTimeoutFires: Int
    var glibCostIterations: Int
    var glibCostInstructionIterations: Int
    /// The peers to measure (all unless `--peers` narrows it, e.g. for profiling).
    var peers: [Peer] = Peer.allCases

    static let full = Plan(
        repetitions: 5, pairs: 7, throughputCounts: [10, 1_000, 10_000, 100_000, 1_000_000], throughputSeconds: 1,
        scheduleCounts: [10_000, 100_000, 1_000_000],
        instructionTimers: [10_000, 100_000], instructionFireTimers: [1_000, 10_000],
        instructionFireMilliseconds: 1_000, coalescingSeconds: 4, precisionFires: 300,
        alignedInterval: 1, alignedFires: 4, wakeSamples: 1_000, passes: 200_000,
        memoryCounts: [100_000, 1_000_000], descriptorCounts: [10, 8_000, 10_000, 50_000], descriptorSamples: 1_000,
        descriptorFeedSeconds: 1, jobBurst: 100_000,
        machineProcesses: [1, 4, 8], machineSeconds: 8, machineRepetitions: 3,
        machineLaunch: 1.5, childSamples: 1_000, childLeakCount: 10_000,
        fileSamples: 1_000, idleCallouts: 1_000_000,
        glibSamples: 1_000, glibSeconds: 4, glibTimeoutFires: 300,
        glibCostIterations: 1_000, glibCostInstructionIterations: 300)

    /// A smoke test: every workload and peer, one repetition, shorter runs, and no
    /// 100k-timer runs (Foundation needs seconds for one pass over 100k due timers).
    static let quick = Plan(
        repetitions: 1, pairs: 2, throughputCounts: [10, 1_000, 10_000], throughputSeconds: 0.15,
        scheduleCounts: [10_000],
        instructionTimers: [1_000], instructionFireTimers: [1_000], instructionFireMilliseconds: 200, coalescingSeconds: 1.2, precisionFires: 50,
        alignedInterval: 0.2, alignedFires: 3, wakeSamples: 200, passes: 20_000,
        memoryCounts: [20_000], descriptorCounts: [10, 8_000], descriptorSamples: 100,
        descriptorFeedSeconds: 0.2, jobBurst: 10_000,
        machineProcesses: [2], machineSeconds: 2, machineRepetitions: 1,
        machineLaunch: 0.5, childSamples: 100, childLeakCount: 200,
        fileSamples: 100, idleCallouts: 100_000,
        glibSamples: 100, glibSeconds: 1, glibTimeoutFires: 50,
        glibCostIterations: 200, glibCostInstructionIterations: 100)

    /// Runs `measure` on each of `peers` in turn, `repetitions` times: each of its `figures`
    /// figures' values by peer, NaN figures (a run could not give them) left out.
    func repeated(_ peers: [Peer], figures: Int, _ measure: (Peer) -> [Double]) -> [[Peer: [Double]]] {
        var values = [[Peer: [Double]]](repeating: [:], count: figures)
        for _ in 0..<repetitions {
            for peer in peers {
                for (index, value) in measure(peer).enumerated() where !value.isNaN { values[index][peer, default: []].append(value) }
            }
        }
        return values
    }
}
