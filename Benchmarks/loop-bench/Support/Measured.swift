import RunLoopKit

// The parts of RunLoopKit's side that callgrind counts (`--toggle-collect='*measuredFire*'`
// and so on: the instruction rows, `loop-bench --probe` under valgrind): out of line,
// under names that hold `measured`. An uncounted round calls the inlined loops below
// directly: a twin function would be merged with the measured one by the compiler (and
// a pattern matching two nested functions toggles collection off again). libev's side is
// in CLibevBench (`lb_measuredFire`, …).

/// Runs `loop` for `seconds`: the fire workload's window.
@inline(never)
func measuredFire(_ loop: EVRunLoop, seconds: Double) {
    loop.run(mode: .default, for: .seconds(seconds))
}

/// ``addTimers(_:_:into:)``, counted.
@inline(never)
func measuredAdd(_ loop: EVRunLoop, _ after: [Double], into timers: UnsafeMutablePointer<EVTimer>) {
    addTimers(loop, after, into: timers)
}

/// ``invalidateTimers(_:order:)``, counted.
@inline(never)
func measuredInvalidate(_ timers: UnsafeMutablePointer<EVTimer>, order: [Int32]) {
    invalidateTimers(timers, order: order)
}

/// Creates and adds a one-shot timer `after[i]` seconds away for each i, moved into
/// `timers[i]` (uninitialized room for `after.count` references): as libev's side writes
/// its `ev_timer`s into an array, the count holds no array append (its uniqueness check
/// and a retain and release per timer: PROFILING.md, "Tricks and what they earn").
@inline(__always)
func addTimers(_ loop: EVRunLoop, _ after: [Double], into timers: UnsafeMutablePointer<EVTimer>) {
    for index in after.indices {
        let timer = EVTimer(interval: after[index], repeats: false) { _ in }
        loop.add(timer, forMode: .default)
        (timers + index).initialize(to: timer)
    }
}

/// Invalidates `timers` in the order `order`.
@inline(__always)
func invalidateTimers(_ timers: UnsafeMutablePointer<EVTimer>, order: [Int32]) {
    for index in order { timers[Int(index)].invalidate() }
}

/// Runs `loop` until stopped: the idle workload's run (its idle source stops it after the
/// last callout).
@inline(never)
func measuredIdle(_ loop: EVRunLoop) {
    loop.run(mode: .default, for: .seconds(3600))
}

/// Runs `loop` until stopped: the loop thread of the job workload's bursts
/// (`--toggle-collect='*measuredJobs*'` counts it with the sender's side below; the two run
/// on different threads, so neither toggles inside the other).
@inline(never)
func measuredJobsLoop(_ loop: EVRunLoop) {
    loop.run()
}

/// Calls `send` with `job` `count` times: the sending thread of the job workload's closure
/// bursts.
@inline(never)
func measuredJobsSend(_ count: Int, _ job: @escaping @Sendable () -> Void, _ send: (@escaping @Sendable () -> Void) -> Void) {
    for _ in 0..<count { send(job) }
}
