extension EVRunLoop {
    /// How a loop chooses the instant of a wake that its timers' tolerances leave open.
    ///
    /// See <doc:TimersAndTolerance> for both rules and what each costs.
    ///
    /// There is no CFRunLoop counterpart: CF on Linux ignores tolerance, and on Darwin the
    /// kernel coalesces timers across processes without asking.
    ///
    /// A struct with static members rather than an enum, so that a new rule can be added
    /// without breaking code that switches over the existing ones.
    public struct TimerCoalescing: Hashable, Sendable, CustomStringConvertible {
        private enum Rule: Hashable { case perLoop, sharedGrid }
        private let rule: Rule

        /// The loop's own greedy rule: wake at the latest fire date the earliest tolerance
        /// covers. The fewest wakes this loop alone can make, and a lone tolerant timer fires
        /// on its date. Loops and processes do not wake together.
        public static let perLoop = TimerCoalescing(rule: .perLoop)
        /// The machine's shared grid: when the wake window allows, wake on a grid point that
        /// every RunLoopKit loop on the machine (every thread, every process) computes alike,
        /// its phase drawn from the boot id. Never before a fire date nor past a tolerance, but
        /// a lone tolerant timer may fire later than its date, within its tolerance, and a
        /// dense stream of timers wakes once per grid step (at most 10/9 of its greedy count).
        public static let sharedGrid = TimerCoalescing(rule: .sharedGrid)

        /// `perLoop` or `sharedGrid`.
        public var description: String {
            switch rule {
            case .perLoop: "perLoop"
            case .sharedGrid: "sharedGrid"
            }
        }
    }

    /// How this loop places its tolerant wakes; ``TimerCoalescing/perLoop`` by default.
    ///
    /// The default keeps what a CF or Foundation program expects of a timer alone on its
    /// loop: it fires on its date, and a loop never wakes more often than its greedy count.
    /// Choose ``TimerCoalescing/sharedGrid`` for loops whose timers are tolerant and which run
    /// alongside others (several threads or processes with periodic work): their wakes then
    /// land on the same instants and the machine wakes once for all of them. Loop thread only.
    public var timerCoalescing: TimerCoalescing {
        get {
            checkOwner("timerCoalescing")
            return backend.usesSharedGrid ? .sharedGrid : .perLoop
        }
        set {
            checkOwner("timerCoalescing")
            backend.usesSharedGrid = newValue == .sharedGrid
        }
    }
}
