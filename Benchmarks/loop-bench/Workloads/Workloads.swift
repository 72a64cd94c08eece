/// A workload: its `--only` name, its line in the report, what measures it, and the entry
/// point of its child processes (``Children``, ``Pairs``) if it starts any.
protocol Workload: Sendable {
    static var name: String { get }
    static var summary: String { get }
    static func measure(_ plan: Plan) -> [Row]
    static func child(_ arguments: [String])
}

extension Workload {
    static func child(_ arguments: [String]) { fatalError("loop-bench: workload \(name) starts no child processes") }
}

/// Every workload, in the order.
enum Workloads {
    static let all: [any Workload.Type] = [
        FireThroughput.self, ScheduleCost.self, Instructions.self, Coalescing.self, Precision.self,
        AlignedPhase.self, CrossThreadWake.self, PassOverhead.self, MemoryPerTimer.self, DescriptorSources.self,
        ExecutorJobs.self, AsyncSleeps.self, MachineCoalescing.self, ChildExits.self, FileChanges.self,
        IdleCallouts.self, GLibBothWays.self, GLibIterationCost.self, Observing.self,
    ]
}
