/// The counts at which a workload measures only RunLoopKit and libev, in its interleaved
/// pairs (``Pairs``): above ``largestForAllPeers`` the other peers would take minutes per
/// measurement (Foundation needs about 2 s for one pass over 100k due timers and about
/// 10 s to invalidate 100k timers) or their own memory, so their cells say why they are empty.
enum PairsOnly {
    /// The largest count every peer is measured at.
    static let largestForAllPeers = 100_000

    /// The peers a workload measures in this process at `count`: ``Pairs/others(_:)``, or
    /// none above ``largestForAllPeers``.
    static func others(_ peers: [Peer], count: Int) -> [Peer] {
        count <= largestForAllPeers ? Pairs.others(peers) : []
    }

    /// `unavailable` with, above ``largestForAllPeers``, a reason for every peer outside the
    /// pairs that has none yet.
    static func unavailable(_ unavailable: [Peer: String] = [:], count: Int) -> [Peer: String] {
        guard count > largestForAllPeers else { return unavailable }
        var reasons = unavailable
        for peer in Pairs.others(Peer.allCases) where reasons[peer] == nil {
            reasons[peer] = "only RunLoopKit and libev are measured above N = \(largestForAllPeers.grouped) (the other peers would take minutes per measurement)"
        }
        return reasons
    }
}
