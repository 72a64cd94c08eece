/// The three run loops every workload is measured on, in table order.
enum Peer: String, CaseIterable, Codable, Sendable {
    /// RunLoopKit's `EVRunLoop`.
    case runLoopKit = "RunLoopKit"
    /// libev driven from C (the `CLibevBench` target).
    case libev = "libev (C)"
    /// Foundation's `RunLoop`/`Timer`, with CoreFoundation's `CFRunLoop` API where
    /// Foundation has no spelling (observers, `CFRunLoopWakeUp`).
    case foundation = "Foundation"

    /// The peers RunLoopKit is compared against.
    static let others: [Peer] = [.libev, .foundation]
}

extension Peer {
    /// The peer's name on the command line.
    var key: String {
        switch self {
        case .runLoopKit: "runloopkit"
        case .libev: "libev"
        case .foundation: "foundation"
        }
    }

    init?(key: String) {
        guard let peer = Peer.allCases.first(where: { $0.key == key.lowercased() }) else { return nil }
        self = peer
    }
}
