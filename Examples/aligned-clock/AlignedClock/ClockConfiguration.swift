/// What a ``ClockSession`` measures.
public struct ClockConfiguration: Sendable {
    /// The strategies to run side by side (`--compare` runs all three timers).
    public var strategies: [Strategy]
    /// Seconds of simulated work to publish a tick (`--publish-cost`).
    public var publishCost: Double
    /// The lead that makes the published value land on the second (`--lead`).
    public var lead: LeadSetting
    /// How long after the session starts the naive timer is started: the "arbitrary moment"
    /// of the scenario, random in the real program and fixed in tests.
    public var naiveStartDelay: Double

    /// Creates a configuration. With a lead, ``Strategy/alignedWithLead`` runs next to
    /// ``Strategy/aligned`` so that one run reports the published error with and without it.
    public init(compare: Bool, publishCost: Double = 0, lead: LeadSetting = .none, naiveStartDelay: Double) {
        var strategies: [Strategy] = compare ? [.naive, .polling, .aligned] : [.aligned]
        if lead != .none { strategies.append(.alignedWithLead) }
        self.strategies = strategies
        self.publishCost = publishCost
        self.lead = lead
        self.naiveStartDelay = naiveStartDelay
    }
}
